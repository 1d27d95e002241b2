package uverbs

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// ErrClosed is returned by operations on a closed object.
var ErrClosed = errors.New("uverbs: use of closed object")

// Context is an opened device: its uverbs command file and the async event
// file the kernel created with it. It is what ibv_open_device returns.
// All kernel objects made through a Context are released when it closes.
type Context struct {
	dev   Device
	cmd   *os.File // the uverbs character device
	fd    *ucmd.FD
	async *os.File // non-blocking, on the runtime poller

	numCompVectors int

	closeOnce sync.Once
	closeErr  error
	closed    bool
	mu        sync.RWMutex // held for reading by commands, for writing by Close
}

// contextDriverOut is the size of each driver's GET_CONTEXT response
// (udata out); the kernel refuses a smaller buffer.
var contextDriverOut = map[Driver]int{
	DriverSIW: 8, // struct siw_uresp_alloc_ctx
}

// Open opens dev, as ibv_open_device does.
func Open(dev Device) (*Context, error) {
	f, err := os.OpenFile(dev.Path(), os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("uverbs: open %s: %w", dev.Name, err)
	}
	c := &Context{dev: dev, cmd: f, fd: ucmd.NewFD(int(f.Fd()), uint32(dev.Driver))}
	if err := c.getContext(); err != nil {
		f.Close()
		return nil, fmt.Errorf("uverbs: open %s: %w", dev.Name, err)
	}
	// rdma-core sends write commands through ioctl when the kernel has
	// INVOKE_WRITE; do the same, so that both paths stay exercised.
	c.fd.UseIoctl(true)
	if _, err := c.QueryDevice(); err != nil {
		c.fd.UseIoctl(false)
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
	cmd := ucmd.Cmd{
		Num:    abi.IB_USER_VERBS_CMD_GET_CONTEXT,
		Req:    ucmd.Bytes(&req),
		Resp:   ucmd.Bytes(&resp),
		DrvOut: make([]byte, contextDriverOut[c.dev.Driver]),
	}
	if err := c.fd.Do(&cmd); err != nil {
		return err
	}
	fd := int(resp.AsyncFD)
	// Non-blocking before os.NewFile, so that the file joins the poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	c.async = os.NewFile(uintptr(fd), c.dev.Name+"-async")
	c.numCompVectors = int(resp.NumCompVectors)
	return nil
}

// Device returns the device c was opened on.
func (c *Context) Device() Device { return c.dev }

// NumCompVectors returns how many completion vectors the device has.
func (c *Context) NumCompVectors() int { return c.numCompVectors }

// Close releases the context and every kernel object created through it.
// It is safe to call more than once.
func (c *Context) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.closed = true
		c.closeErr = errors.Join(c.async.Close(), c.cmd.Close())
	})
	return c.closeErr
}

// do runs a command unless c is closed.
func (c *Context) do(cmd *ucmd.Cmd) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	return c.fd.Do(cmd)
}
