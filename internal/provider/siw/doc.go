// Package siw is the user-space data path of the SoftiWARP (siw) kernel
// driver, the counterpart of rdma-core's providers/siw.
//
// # Why a valid flag and not indices
//
// siw shares no producer or consumer index with user space. Each queue
// element carries its own ownership bit, SIW_WQE_VALID in its flags: the
// side that fills an element sets it, the side that consumes the element
// clears it. A free-running index on each side, private to that side, says
// which slot to look at next. This lets the kernel consume send and
// receive elements from its own context (softirq, a per-CPU TX thread) and
// write completions from wherever the TCP stream delivers them, with no
// index for both sides to agree on and nothing to publish but one word per
// element; and "full" and "empty" fall out of the same bit.
//
// The price is ordering. The kernel copies a send element out of the ring
// as soon as it sees the flag set (siw_activate_tx_from_sq), so the flag
// must become visible after every other field. We write the body with
// plain stores and then publish flags, num_sge and opcode, which share the
// 32-bit word at offset 8 of both struct siw_sqe and struct siw_rqe, with
// one atomic store: the element count and the opcode can then never be
// seen stale next to a fresh flag. Completions work the same way in the
// other direction: an atomic load of the CQE's flags word (which also
// holds its opcode and status) decides whether the element is ours, and an
// atomic store of zero hands it back to the kernel after we copied it out.
// Go's atomics are sequentially consistent, which covers the release and
// acquire the protocol needs.
//
// Those word layouts assume a little-endian machine: purerdma runs on
// amd64 and arm64 only.
//
// # Why the doorbell is sometimes skipped
//
// The send doorbell is a POST_SEND write with no work requests. For a
// user QP the kernel then runs the transmit path in the caller's system
// call (siw_post_send: siw_activate_tx, then siw_qp_sq_process with
// in_syscall set) unless a transmit is already in progress; its transmit
// loop takes the next valid element by itself after each one it finishes.
// Like rdma-core, Flush therefore rings only when the element before the
// first new one has been taken by the kernel (its flag is clear), that is
// when the kernel may have gone idle; if that element is still valid the
// kernel has work queued ahead of ours and will reach ours without a
// system call. There is no receive doorbell: the kernel looks for a valid
// receive element when a message arrives.
package siw
