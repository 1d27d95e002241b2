// Package rsocket is librdmacm's rsockets for Go: stream connections over
// RDMA that implement net.Conn and net.Listener, and that speak the wire
// protocol of rdma-core's librdmacm/rsocket.c, so a Go program talks to C
// programs using rsockets (rstream, or anything under librspreload.so).
//
// The network names are "rdma", "rdma4" and "rdma6"; addresses are
// "host:port" as for TCP, and an address must belong to an RDMA device
// (RoCE such as rxe, or iWARP such as siw). rsocket port numbers live in
// the RDMA CM's TCP port space, not the kernel's TCP ports.
//
//	l, err := rsocket.Listen("rdma", "192.0.2.1:7471")
//	c, err := rsocket.Dial(ctx, "rdma", "192.0.2.1:7471")
//
// Each side owns a receive buffer that the peer fills with RDMA writes;
// a 32-bit message (the immediate data of the write, or on iWARP a small
// send after it) tells the receiver how many bytes arrived. The receiver
// hands halves of its buffer back with credit updates as the application
// reads. docs/rsocket.md describes the protocol.
//
// Blocking calls park on Go's runtime poller: each connection has a
// goroutine sleeping on its completion channel and one on its CM event
// channel. Deadlines end a blocked call with an error matching
// os.ErrDeadlineExceeded, a closed Conn gives an error matching both
// net.ErrClosed and uverbs.ErrClosed (unix.EBADF), and a peer
// that vanished gives an error matching syscall.ECONNRESET. Read and Write
// may run at the same time; neither allocates.
//
// On operating systems other than Linux the package compiles, and every
// call that would reach the kernel returns an error matching
// errors.ErrUnsupported and, where a device is asked for, as Dial and
// Listen do, uverbs.ErrNoDevice.
package rsocket
