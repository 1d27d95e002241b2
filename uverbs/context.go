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
	caps uint64
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
	core, err := verbs.NewContext(dev.Name, f, uint32(dev.Driver))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("uverbs: open %s: %w", dev.Name, err)
	}
	c := &Context{contextLink: verbs.NewLink(core), dev: dev, core: core}
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

// getContext sends GET_CONTEXT between the two halves of the driver's
// open: Start fills the driver request, Opened reads the response. If
// either the command or Opened fails, nothing of the context is left to
// close but the command file.
func (c *Context) getContext() error {
	var (
		req  abi.GetContext
		resp abi.GetContextResp
	)
	in, out := c.core.Udata(abi.IB_USER_VERBS_CMD_GET_CONTEXT)
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_GET_CONTEXT,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvIn:  make([]byte, in),
		DrvOut: make([]byte, out),
	}
	p := c.core.Provider
	if p != nil {
		p.Start(cmd.DrvIn)
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
	// Last, as nothing after it fails: a context the driver opened is
	// closed with Close, with the command file.
	if p != nil {
		if err := p.Opened(cmd.DrvOut); err != nil {
			unix.Close(fd)
			return verbs.Public(err)
		}
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
