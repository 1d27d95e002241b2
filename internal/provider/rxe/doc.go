// Package rxe is the user-space data path of the soft-RoCE driver
// (rdma_rxe), the counterpart of rdma-core's providers/rxe.
//
// Every rxe queue — send queue, receive queue, SRQ, CQ — is one
// struct rxe_queue_buf the kernel allocates and user space maps: a 384-byte
// header holding the element size, the index mask and the two indices, then
// a power-of-two number of fixed-size slots. There is no hardware here; the
// kernel's requester, responder and completer threads are the "device", and
// the indices are the whole protocol between them and us.
//
// Each index has exactly one writer. User space owns the producer of the
// send, receive and shared receive queues and the consumer of the CQ; the
// kernel owns the other one. The kernel keeps a private copy of its own
// index and masks whatever it reads of ours, so a bad value from us can only
// hurt this process's queues, never the kernel. Indices are stored already
// masked; the ring is empty when they are equal and full when the producer
// is one behind the consumer, so a ring of n slots holds n-1 entries and
// needs no separate count.
//
// Ordering is what makes it work. A slot's contents must be visible before
// the index that hands the slot over, and must not be read (or reused)
// before the index that hands it back: so the index we own is stored with
// release semantics after we have filled (or finished reading) the slots,
// and the kernel's index is loaded with acquire semantics before we touch
// the slots it covers. The kernel pairs these with smp_load_acquire and
// smp_store_release. Go's sync/atomic operations are sequentially
// consistent, which is more than enough. Everything else — the cached copy
// of our own index, the slot bytes — is plain memory, protected by the
// caller's per-queue lock (see package provider).
//
// Work requests are batched: Put fills a slot and advances only a private
// producer, and Flush publishes the whole batch with one release store.
// That keeps the kernel from seeing half a batch and, for the send queue,
// lets one doorbell (an empty POST_SEND write, which wakes the requester)
// cover many requests. Receive queues need no doorbell: the responder
// looks at the ring when a packet arrives.
//
// A slot is not cleared before it is filled: like librxe, Put writes what
// the kernel reads of a new request (a send's whole rxe_send_wr, iova,
// state, ssn and DMA counters, a receive's wr_id and DMA counters, then
// the SGEs in use or the inline data) and leaves the rest as the slot's
// previous use left it. The kernel's own bookkeeping in a send WQE (status,
// mask, PSNs, ack length, has_rd_atomic) is written by its requester and
// completer before they read it, and the bytes past the SGEs in use are
// read by no one; the ring then holds the same bytes as under librxe.
package rxe
