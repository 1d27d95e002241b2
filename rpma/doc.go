// Package rpma is librpma for Go: remote persistent memory access over
// RDMA, with librpma 1.3's objects, defaults and semantics, and its wire
// formats, so that a Go peer works with a C librpma peer.
//
// A Peer holds a device and a protection domain. Memory is registered with
// it for the uses librpma names (Usage); a registered region's 21-byte
// Descriptor travels to the other side, which turns it into a RemoteMR.
// A server Listens on an Endpoint and takes ConnRequests from it; a client
// makes a ConnRequest with NewConnRequest. Connecting a request gives a
// Conn, on which Read, Write, AtomicWrite, Flush, Send, Recv and their
// immediate-data variants post operations, and whose CQ (and receive CQ,
// when configured) report their completions. An Op, passed by value,
// carries what librpma's operations take as flags and op_context: when to
// report a completion, and the ID it comes back with.
//
// # One call
//
// On top of librpma's objects, Dial connects to "host:port" in one call
// (device, Peer, connection, the server's region from its private data)
// and Listen with Accept serve; their Close releases everything in
// order. In librpma's words a Peer is the local RDMA device: its context
// and protection domain, which memory is registered with; AllocMR
// allocates and registers in one call. Conn.Do, ReadAndWait,
// WriteAndWait and FlushAndWait post an operation and wait for its own
// completion, from any number of goroutines on one connection; a
// Messenger sends and receives messages and keeps its receives posted.
// docs/rpma.md describes them, and how to read memory its owner changes
// (the seqlock of Example_keyValue).
//
// Private data, and so any descriptor sent in it, is neither
// authenticated nor encrypted: whoever reaches a listening endpoint can
// connect with any private data, and a RemoteMR is only as trustworthy as
// the peer that sent it. Regions are registered with the least access
// their Usage needs, and every offset is checked against its region
// before an operation is posted; docs/faults.md says what a peer can
// still do, and what the user sees when things fail.
//
// # Errors
//
// Errors are sentinels for errors.Is, one per librpma error code
// (RPMA_E_*). Where the whole module has the kind, the sentinel is the
// shared value: ErrInvalid is uverbs.ErrInvalid (RPMA_E_INVAL),
// ErrUnsupported is uverbs.ErrUnsupported (RPMA_E_NOSUPP), and a closed
// object answers ErrClosed, uverbs.ErrClosed; each also matches its errno
// (EINVAL, EOPNOTSUPP, EBADF). The others are the package's own:
// ErrProvider (which also wraps the lower layer's error, errno included),
// ErrNoCompletion, ErrNoEvent, ErrSharedChannel, ErrNotSharedChannel,
// ErrUnknown, ErrNoMem and ErrAgain. Code returns the librpma code of an
// error, and CodeText its rpma_err_2str text.
//
// A nil object answers ErrInvalid, as librpma answers a NULL one. A
// closed one answers ErrClosed before its arguments are looked at; Code
// maps it to CodeInval, since librpma's delete functions set the caller's
// pointer to NULL. A second Close does nothing, as librpma's delete
// functions do with a NULL pointer.
//
// # A peer that goes away
//
// librpma's waits sleep on when the peer is gone. Here CQ.Wait and
// Conn.Wait also watch the connection: once the peer has disconnected
// or its process has died (its kernel then disconnects), or Disconnect
// was called, they return at once an error of kind ErrNoCompletion
// (CodeNoCompletion, librpma's code for a failed wait) that also matches
// rdmacm.ErrDisconnected and syscall.ECONNRESET. The completions the CQs
// hold, the flushed ones among them, stay for GetWC, and the
// disconnection for Conn.NextEvent (ConnClosed). A peer host that
// vanishes without a disconnection is noticed only when the transport
// gives up on an outstanding operation, never on rxe, which retries
// forever: bound such waits with a context deadline (see the rdmacm
// package's documentation).
//
// # Concurrency
//
// Blocking calls take a context.Context; the files behind Fd methods are
// on Go's runtime poller. Unless a method says otherwise, a Conn's posting
// methods and its CQs' GetWC may be called from several goroutines, while
// creating and deleting objects (NewConnRequest, Listen, Close ...) must
// not race with the use of the same object, as in librpma's
// THREAD_SAFETY.md; a Conn's Close is the exception and may race with its
// operations. docs/concurrency.md has the whole contract.
//
// docs/librpma-mapping.md maps every librpma function to its Go
// counterpart.
//
// On operating systems other than Linux the package compiles, and every
// call that would reach the kernel returns an error matching
// errors.ErrUnsupported and, where a device is asked for, as ContextByAddr
// does, uverbs.ErrNoDevice.
package rpma
