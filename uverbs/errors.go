package uverbs

import (
	"errors"
	"syscall"

	"github.com/purerdma/purerdma/internal/verbs"
)

// The errors of every purerdma package come from one vocabulary: each kind
// of failure has one sentinel, defined here (or, for the kinds cq, mr and
// rdmacm share with uverbs, in an internal package and exported here), and
// every package returns it for that kind. cq.ErrClosed and
// rdmacm.ErrClosed are the same value as ErrClosed. Each sentinel also
// matches the errno libibverbs or librdmacm would set for the same
// failure, so a caller may test either. Sentinel texts carry no package
// name; the error that wraps one names its package once
// ("uverbs: post recv: work request 3: receive queue of 16 holds no more:
// queue full"). See docs/architecture.md, Errors.
var (
	// ErrClosed is returned by operations on a closed (or nil) object. It
	// matches syscall.EBADF.
	ErrClosed = verbs.ErrClosed

	// ErrBusy is returned when an object cannot be destroyed because
	// others still use it, e.g. a PD that has memory regions or queue
	// pairs, or a CQ that queue pairs use. Destroy those first; the object
	// stays usable. It matches syscall.EBUSY.
	ErrBusy = verbs.ErrBusy

	// ErrInvalid is returned for invalid arguments, whether purerdma or
	// the kernel refuses them. It matches syscall.EINVAL.
	ErrInvalid = verbs.ErrInvalid

	// ErrQueueFull is returned when a work request does not fit in its
	// queue. It matches syscall.ENOMEM, which libibverbs returns.
	ErrQueueFull = verbs.ErrQueueFull

	// ErrUnsupported is returned for an operation the device or its
	// driver does not have (RDMA FLUSH on Linux 6.1, memory windows and
	// CQ resize on siw, ...). It matches syscall.EOPNOTSUPP, as libibverbs'
	// errno would, and so errors.ErrUnsupported.
	ErrUnsupported = verbs.ErrUnsupported

	// ErrNoProvider is returned when a device's driver has no purerdma
	// provider, so that queues cannot be created on it. Discovery and
	// queries work on every device. It is a kind of ErrUnsupported and
	// matches syscall.EOPNOTSUPP.
	ErrNoProvider = verbs.ErrNoProvider

	// ErrNoDevice is returned when no RDMA device matches a lookup. It
	// matches syscall.ENODEV, which ibv_open_device and rdma_cm return.
	ErrNoDevice = verbs.NewSentinel("no such RDMA device", syscall.ENODEV)

	// ErrNoGID is returned, wrapped, by GIDIndex when no GID table entry
	// matches the address. No errno: libibverbs has no call that fails
	// this way.
	ErrNoGID = errors.New("no matching GID")
)
