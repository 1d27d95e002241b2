//go:build !purerdma_stub

package uverbs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// This file holds what reads the kernel's devices or opens them;
// sys_other.go stubs it.

// Devices lists the RDMA devices that have a uverbs character device,
// sorted by name. It asks RDMA netlink and falls back to sysfs when the
// kernel does not answer there.
func Devices() ([]Device, error) {
	devs, err := netlinkDevices()
	if err != nil {
		var serr error
		if devs, serr = sysfsDevices(sysfsRoot); serr != nil {
			return nil, errors.Join(err, serr)
		}
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Name < devs[j].Name })
	return devs, nil
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

// PortCounters returns the counters of the device's port (from 1), read
// from sysfs: first the driver's ports/N/hw_counters (what `rdma
// statistic show` prints; rxe has them, siw has none), then the
// InfiniBand performance counters of ports/N/counters where the device
// has them (a hardware HCA's; neither rxe nor siw), each in the order of
// their names. A device without either returns no counters and no error;
// a port the device does not have is ErrInvalid. The kernel caches the
// hw counters for the milliseconds in hw_counters/lifespan (10 for
// rxe), so a read may lag the traffic by that much.
func (d Device) PortCounters(port int) ([]Counter, error) {
	return portCounters(sysfsRoot, d.Name, port)
}
