package uverbs

import (
	"os"

	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

type contextLink = verbs.Link[*verbs.Context]

// Context is an opened device: its uverbs command file and the async event
// file the kernel created with it. It is what ibv_open_device returns.
// All kernel objects made through a Context are released when it closes.
type Context struct {
	// contextLink gives cq and mr the core through verbs.ContextOf,
	// typed and without exporting it (see verbs.Link).
	contextLink
	dev   Device
	core  *verbs.Context
	async *os.File // non-blocking, on the runtime poller

	numCompVectors int
	// caps are the device capability flags QueryDevice reported at Open
	// (zero if it failed): PostSend and mr.Register check the Linux
	// 6.2 operations against them without a system call.
	caps DeviceCap
}

// OpenName opens the device called name.
func OpenName(name string) (*Context, error) {
	dev, err := DeviceByName(name)
	if err != nil {
		return nil, err
	}
	return Open(dev)
}

// Device returns the device c was opened on.
func (c *Context) Device() Device {
	if c == nil {
		return Device{}
	}
	return c.dev
}

// DeviceCapFlags returns DeviceAttr.DeviceCapFlags as the device reported
// them when c was opened (0 if that query failed), without a system call.
func (c *Context) DeviceCapFlags() DeviceCap {
	if c == nil {
		return 0
	}
	return c.caps
}

// NumCompVectors returns how many completion vectors the device has.
func (c *Context) NumCompVectors() int {
	if c == nil {
		return 0
	}
	return c.numCompVectors
}

// Close releases the context and every kernel object created through it:
// closing those objects afterwards does nothing. It is safe to call more
// than once.
func (c *Context) Close() error {
	if c == nil {
		return ErrClosed
	}
	return c.core.Close()
}

// do runs a command unless c is closed.
func (c *Context) do(cmd *ucmd.Cmd) error { return c.core.Do(cmd) }

// run runs an ioctl method unless c is closed.
func (c *Context) run(m *ucmd.Method) error { return c.core.Run(m) }
