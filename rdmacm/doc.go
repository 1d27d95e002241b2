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
// RTS, and Disconnect moves it to ERR (SQD on iWARP devices other than
// siw, as librdmacm does on every iWARP device; see ID.Disconnect). So
// RoCE (rxe) and iWARP (siw) devices connect the same way.
//
// ID.WaitEvent turns the asynchronous steps into blocking calls: it waits
// for the ID's next event and checks its type, leaving the events of other
// IDs on the channel to their own waiters.
//
// # Connecting in one call
//
// Dial and Config.Dial do what librdmacm's rdma_create_ep and
// rdma_connect do: look the host up, resolve the address and the route
// (ID.Resolve), create an RC QP with a send and a receive CQ, connect
// and wait for the connection. Listen and Listener.Accept are the
// server's side. A zero Config works: the QP sizes default as
// Config.QPCap says and a nil ConnParam means librdmacm's NULL. The IDs
// they return have an event channel of their own, which ID.Close closes
// after the QP, the CQs and the ID. The private data of the connection's
// set-up, a server's region address and rkey say, is ID.PrivateData.
//
// # A peer that goes away
//
// The completion waits of an ID (GetSendComp, GetRecvComp, and WaitCQ
// for CQs of the caller's bound to a connection) also watch the
// connection: when its EventDisconnected or EventDeviceRemoval arrives,
// or the ID is closed, they stop sleeping. GetSendComp and GetRecvComp
// first hand out the completions the CQ holds, then return an error
// matching ErrDisconnected and syscall.ECONNRESET (ErrClosed for a
// closed ID); no goroutine of the caller's needs to watch the events.
// The event itself stays queued for WaitEvent. A peer process that
// exits or is killed disconnects: its kernel destroys its IDs, which
// sends the disconnection (a DREQ on InfiniBand and RoCE, a TCP close on
// iWARP). A peer host that vanishes without a disconnection is noticed
// only when the transport gives up on an outstanding send: on InfiniBand
// and RoCE hardware after the QP's retries, on iWARP (siw) when TCP
// does; rxe takes a retry count of 7 as "retry forever", so there a
// vanished host is never noticed by a connection that has nothing
// outstanding, and a wait ends only with its context. Bound such waits
// with a context deadline, or use rsocket, whose keepalives and
// UserTimeout detect it.
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
