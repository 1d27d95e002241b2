// Package mlx5 is the user-space data path of NVIDIA/Mellanox ConnectX
// adapters (the mlx5_ib kernel driver), the counterpart of rdma-core's
// providers/mlx5 (libmlx5) as of v44. It has not yet run on hardware: no
// machine the project tests on has a ConnectX. Its correctness rests on
// equivalence with libmlx5, which a differential harness checks by running
// both over the same fake memory and comparing every byte they write
// (docs/mlx5.md says how each part maps onto libmlx5's functions, and
// where it knowingly differs).
//
// Unlike rxe and siw, mlx5 keeps every queue in user memory: the provider
// allocates the send and receive queues, SRQs and CQs (page-aligned,
// outside the Go heap, internal/provider/mem) and their doorbell records,
// puts their addresses in the create commands, and the kernel pins them
// for the device. The device is told about new work by two writes: the
// doorbell record in host memory, which it reads by DMA, and a doorbell
// register in a UAR page mapped from the device (uar.go), which a send
// queue writes the first 8 bytes of its last WQE to, or the whole WQE
// (BlueFlame) when it is alone and small. CQs are read by an owner bit in
// each CQE that flips on every pass over the ring, and armed through the
// UAR's CQ doorbell.
//
// The work request building blocks are small functions over the device's
// formats (format.go): a control segment opens every send WQE, followed by
// a remote address segment (RDMA), remote address and atomic segments
// (atomics), or a datagram segment holding the AH's address vector (UD),
// then the data as data segments or as one inline segment. Put writes one
// WQE as one pass of libmlx5's _mlx5_post_send loop does, Flush rings the
// doorbell once for the batch as its post_send_db does, so that a batch
// writes what one ibv_post_send of the same list would, byte for byte.
//
// Locking follows package provider: each queue's methods run under the
// caller's lock of that queue. What libmlx5 guards with locks of its own
// that span queues is guarded with the caller's locks where it can be:
// libmlx5's cq->lock, which Poll and the cleaning of a QP's CQEs (at RESET
// and at destruction) share, is the public CQ's lock, which the QP takes
// through provider.QPInit's SendCQLock and RecvCQLock (after its own
// locks, see docs/concurrency.md), so Poll, Take, Release, Arm and Event
// take no lock of their own. An SRQ has a mutex that Put and Poll share (srq->lock, since polling frees SRQ WQEs),
// and a bfreg that QPs share takes a mutex around the doorbell write and
// the swap of its BlueFlame halves (the bfreg spinlock libmlx5 takes
// unless the bfreg belongs to one QP, or is bfreg 0, which never does
// BlueFlame). The indices that cross from one lock to another (a queue's
// head, which Flush writes and Poll reads, and its tail, which Poll writes
// and Put reads) are atomics, which also give Go's memory model the
// happens-before edge between writing a wr_id and reading it back; see
// docs/memory-ordering.md.
//
// Four things libmlx5 gets from libibverbs are optional interfaces of
// package provider, which uverbs, cq and internal/verbs find by type
// assertion: a device that can allocate UARs (provider.UARDevice), which
// kernels that hand out no static UARs require for QPs; the CQ's Event
// (provider.EventCounter), which advances the arm sequence number for each
// completion event (libibverbs' cq_event); the send queue's Modified
// (provider.StateTracker), which does what mlx5_modify_qp does after the
// command (a move to RESET cleans the QP's CQEs and restarts its queues,
// and the state gates posting); and the context's Closing and Closed
// (provider.Teardown), which keep the queue memory of the objects a
// closing context still has until the command file's close has destroyed
// them.
//
// Idle is true once Poll has seen the completion of the last request
// handed to the device: the device's progress shows only in CQEs, so
// after unsignaled requests it waits for a later signaled one (or for the
// flush of a QP in error, which completes every request).
//
// Put, Flush, Poll, Take, Release and Arm allocate nothing.
package mlx5
