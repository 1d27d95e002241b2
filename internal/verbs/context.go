package verbs

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/drivers"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// object is a live object of the context and how to release its
// user-space resources (mapped queues, files) once the kernel has
// destroyed it with the context.
type object struct {
	obj     any
	release func()
}

// Context is one opened device.
type Context struct {
	Name   string
	Driver provider.Driver // nil when purerdma has no provider for the device
	// DriverID is the device's kernel driver (RDMA_DRIVER_*), which
	// NeedDriver names when it has no provider.
	DriverID uint32
	// Provider is the driver's state for this context (nil with Driver):
	// uverbs.Open starts and finishes it around GET_CONTEXT, and Close
	// closes it after the objects and before the command file.
	Provider provider.Context
	FD       *ucmd.FD
	file     *os.File
	extra    []*os.File // closed with the context
	Async    EventFile  // the async event file, once SetAsync ran

	mu         sync.RWMutex // held for reading by commands, for writing by Close
	closed     bool
	fileClosed bool
	objs       map[uint64]object
	next       uint64
	after      []func() // run once the file is closed (afterClose)
}

// NewContext wraps an opened uverbs command file of a device whose kernel
// driver id is driverID, with the driver's state for it if purerdma has a
// provider for the driver. The caller still owns file if it fails.
func NewContext(name string, file *os.File, driverID uint32) (*Context, error) {
	c := &Context{
		Name:     name,
		DriverID: driverID,
		FD:       ucmd.NewFD(int(file.Fd()), driverID),
		file:     file,
		objs:     map[uint64]object{},
	}
	if d, ok := drivers.Provider(driverID); ok {
		p, err := d.NewContext(c)
		if err != nil {
			return nil, Public(err)
		}
		c.Driver, c.Provider = d, p
	}
	return c, nil
}

// SetAsync records the context's async event file; Close closes it.
func (c *Context) SetAsync(f *os.File) {
	c.Async.File = f
	c.extra = append(c.extra, f)
}

// Udata returns the driver's private data sizes for a write command: none
// without a driver (or context).
func (c *Context) Udata(cmd uint32) (in, out int) {
	if c == nil || c.Provider == nil {
		return 0, 0
	}
	return c.Provider.Udata(cmd)
}

// NeedDriver returns ErrNoProvider, naming the device's driver, unless
// the context has a driver.
func (c *Context) NeedDriver(what string) error {
	if c.Provider == nil {
		return fmt.Errorf("%s on %s: no Go provider for kernel driver %s (purerdma has %s): %w",
			what, c.Name, drivers.Label(c.DriverID), strings.Join(drivers.WithProvider(), ", "), ErrNoProvider)
	}
	return nil
}

// Do runs a write command unless the context is closed. A kernel errno
// also matches its sentinel (Public: EINVAL is ErrInvalid, ...).
func (c *Context) Do(cmd *ucmd.Cmd) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	return Public(c.FD.Do(cmd))
}

// Run runs an ioctl method unless the context is closed, with Do's
// errors.
func (c *Context) Run(m *ucmd.Method) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	return Public(c.FD.Run(m))
}

// Closed reports whether Close has begun. A nil context, that of a zero
// uverbs.Context, was never open and counts as closed.
func (c *Context) Closed() bool {
	if c == nil {
		return true
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// Add records a live object and returns the user handle that names it in
// the kernel's events. Close calls release, which must be idempotent and
// must wait for the object's data path to leave its queues.
func (c *Context) Add(obj any, release func()) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	c.objs[c.next] = object{obj, release}
	return c.next
}

// afterClose runs f once the command file is closed, and with it every
// kernel object of the context: now if it is.
func (c *Context) afterClose(f func()) {
	c.mu.Lock()
	if !c.fileClosed {
		c.after = append(c.after, f)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	f()
}

// Remove forgets the object with user handle h.
func (c *Context) Remove(h uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objs, h)
}

// Lookup returns the live object with user handle h, or nil.
func (c *Context) Lookup(h uint64) any {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.objs[h].obj
}

// Close releases every live object, closes the driver's state and then the
// command file, which makes the kernel destroy all objects of the context.
// It is idempotent.
func (c *Context) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	objs := c.objs
	c.objs = map[uint64]object{}
	c.mu.Unlock()
	// The objects' queues close before the file, whose close destroys the
	// kernel objects: a driver that owns memory the device can touch
	// keeps it from Closing until Closed (provider.Teardown).
	td, _ := c.Provider.(provider.Teardown)
	if td != nil {
		td.Closing()
	}
	// Objects first: each waits for its own data path to leave the queue
	// memory, and after that nothing rings a doorbell on the file.
	for _, o := range objs {
		o.release()
	}
	var errs []error
	if c.Provider != nil {
		// Before the file: the device pages the driver mapped hold the
		// file open, and the kernel destroys the objects only when the
		// last reference goes. Not under c.mu: the context is closed, so
		// a command the driver tries fails with ErrClosed rather than
		// waiting for the lock.
		errs = append(errs, Public(c.Provider.Close()))
	}
	c.mu.Lock()
	errs = append(errs, c.file.Close())
	for _, f := range c.extra {
		errs = append(errs, f.Close())
	}
	c.fileClosed = true
	after := c.after
	c.after = nil
	c.mu.Unlock()
	if td != nil {
		td.Closed()
	}
	for _, f := range after {
		f()
	}
	return errors.Join(errs...)
}

// Doorbell tells the kernel a QP's send queue has new work. It does not
// take the context lock: the QP's lock keeps it away from a closing
// context (see Close).
func (c *Context) Doorbell(qpHandle uint32) error { return c.FD.Doorbell(qpHandle) }
