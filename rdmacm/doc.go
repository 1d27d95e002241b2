// Package rdmacm is the RDMA connection manager: what librdmacm is to C,
// over /dev/infiniband/rdma_cm and without C.
//
// An ID (rdma_cm_id) is the connection-manager analogue of a socket. It is
// created on an EventChannel, which delivers the events of its IDs: address
// and route resolution, connection requests, establishment, rejection and
// disconnection. The channel's file is non-blocking and parked on Go's
// runtime poller; GetEvent waits with a context.Context and TryGetEvent
// does not wait at all. Events are acknowledged as they are returned.
//
// The package performs the QP state transitions that librdmacm performs:
// CreateQP moves a new QP to INIT with the attributes the kernel computes,
// Accept and the active side's connection handling move it through RTR to
// RTS, and Disconnect moves it to ERR. So RoCE (rxe) and iWARP (siw) devices
// connect the same way.
//
// ID.WaitEvent turns the asynchronous steps into blocking calls: it waits
// for the ID's next event and checks its type, leaving the events of other
// IDs on the channel to their own waiters.
//
// In the UDP port space, ID.JoinMulticast joins a multicast group: the
// EventMulticastJoin event carries the group's address and QKey to send
// with, and the ID's QP is attached to the group to receive from it.
//
// The channel and the ID may be used from several goroutines: posts go
// through the QP's locks, and Close may race with them (they return
// ErrClosed) and ends a WaitEvent on the ID. See docs/concurrency.md.
//
// On operating systems other than Linux the package compiles, and every
// call that would reach the kernel returns an error matching
// errors.ErrUnsupported and, since no connection manager device is there,
// uverbs.ErrNoDevice: NewEventChannel fails so.
package rdmacm
