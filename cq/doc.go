// Package cq provides completion queues and completion channels, what
// ibv_create_cq, ibv_poll_cq, ibv_req_notify_cq and ibv_get_cq_event are to
// C.
//
// A CQ's ring is mapped from the kernel and polled in Go by the device's
// provider: Poll makes no system call and does not allocate. To sleep
// instead of spinning, create the CQ with a Channel, arm it with
// ReqNotify, and Wait on the channel; the channel's file is non-blocking
// and parked on Go's runtime poller, so a waiting goroutine holds no OS
// thread, and Wait honours its context.Context.
//
// The usual loop, as with libibverbs, arms before polling so that no
// completion slips between an empty poll and the wait:
//
//	for {
//		if err := cq.ReqNotify(false); err != nil { ... }
//		n, err := cq.Poll(wc)
//		...
//		if n == 0 {
//			if _, err := ch.Wait(ctx); err != nil { ... }
//		}
//	}
//
// Completions is Poll as a range-over-func iterator, what ibv_start_poll,
// ibv_next_poll and ibv_end_poll are to C: it yields one completion at a
// time without a caller's array, hands the slots back to the kernel once
// when the loop ends, and leaves in the CQ what a break did not reach:
//
//	for wc, err := range cq.Completions(64) {
//		if err != nil { ... }
//		...
//	}
//
// Resize changes the CQ's size in place, as ibv_resize_cq does, without
// losing a completion (rxe; siw cannot resize and returns an error
// matching unix.EOPNOTSUPP).
//
// Poll, Completions, ReqNotify, Resize, Wait and Close may be called from several goroutines,
// but each completion and each event goes to one caller only: poll a CQ
// from one goroutine when the order of completions matters. See
// docs/concurrency.md.
//
// On operating systems other than Linux the package compiles, and every
// call that would reach the kernel returns an error matching
// errors.ErrUnsupported (and uverbs.ErrNoDevice where a device is asked
// for): no Context opens there, and NewChannel fails.
package cq
