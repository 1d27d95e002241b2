package uverbs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// ErrClosed is returned by operations on a closed object.
var ErrClosed = verbs.ErrClosed

// ErrBusy is returned when an object cannot be destroyed because others
// still use it, e.g. a PD that has memory regions or queue pairs, or a CQ
// that queue pairs use. Destroy those first; the object stays usable.
var ErrBusy = verbs.ErrBusy

// ErrNoProvider is returned when a device's driver has no purerdma
// provider, so that queues cannot be created on it. Discovery and queries
// work on every device.
var ErrNoProvider = verbs.ErrNoProvider

// ErrUnsupported is returned for an operation the device or its driver
// does not have (RDMA FLUSH on Linux 6.1, memory windows on siw, ...). It
// matches unix.EOPNOTSUPP, as libibverbs' errno would.
var ErrUnsupported = verbs.ErrUnsupported

// Context is an opened device: its uverbs command file and the async event
// file the kernel created with it. It is what ibv_open_device returns.
// All kernel objects made through a Context are released when it closes.
type Context struct {
	dev   Device
	core  *verbs.Context
	async *os.File // non-blocking, on the runtime poller

	numCompVectors int
	// caps are the device capability flags QueryDevice reported at Open
	// (zero if it failed): PostSend and mr.Register check the Linux
	// 6.2 operations against them without a system call.
	caps uint64
}

func init() {
	verbs.Core = func(public any) any {
		switch x := public.(type) {
		case *Context:
			if x != nil {
				return x.core
			}
		case *PD:
			if x != nil {
				return &x.core
			}
		}
		return nil
	}
}

// Open opens dev, as ibv_open_device does.
func Open(dev Device) (*Context, error) {
	// A Device made by hand must still name a node inside devDir.
	if !filepath.IsLocal(dev.Char) || strings.ContainsRune(dev.Char, '/') {
		return nil, fmt.Errorf("uverbs: open %q: uverbs node %q: %w", dev.Name, dev.Char, ErrNoDevice)
	}
	f, err := os.OpenFile(dev.Path(), os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("uverbs: open %s: %w", dev.Name, err)
	}
	c := &Context{dev: dev, core: verbs.NewContext(dev.Name, f, uint32(dev.Driver))}
	if err := c.getContext(); err != nil {
		f.Close()
		return nil, fmt.Errorf("uverbs: open %s: %w", dev.Name, err)
	}
	// rdma-core sends write commands through ioctl when the kernel has
	// INVOKE_WRITE; do the same, so that both paths stay exercised.
	c.core.FD.UseIoctl(true)
	attr, err := c.QueryDevice()
	if err != nil {
		c.core.FD.UseIoctl(false)
		attr, err = c.QueryDevice()
	}
	if err == nil {
		c.caps = attr.DeviceCapFlags
	}
	return c, nil
}

// OpenName opens the device called name.
func OpenName(name string) (*Context, error) {
	dev, err := DeviceByName(name)
	if err != nil {
		return nil, err
	}
	return Open(dev)
}

func (c *Context) getContext() error {
	var (
		req  abi.GetContext
		resp abi.GetContextResp
	)
	_, out := c.core.Udata(abi.IB_USER_VERBS_CMD_GET_CONTEXT)
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_GET_CONTEXT,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvOut: make([]byte, out),
	}
	if err := c.core.FD.Do(&cmd); err != nil {
		return err
	}
	fd := int(resp.AsyncFD)
	// Non-blocking before os.NewFile, so that the file joins the poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	c.async = os.NewFile(uintptr(fd), c.dev.Name+"-async")
	c.core.SetAsync(c.async)
	c.numCompVectors = int(resp.NumCompVectors)
	return nil
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
func (c *Context) DeviceCapFlags() uint64 {
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
