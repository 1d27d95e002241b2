package verbs

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// The order of a create's second half and of Close, over a pipe standing
// in for the command file: a command written to it succeeds and can be
// read back; a pipe's read end refuses the write, as a kernel that cannot
// destroy the object would.

// events records what happened, in order.
type events struct{ got []string }

func (e *events) add(s string) { e.got = append(e.got, s) }

// pending is a driver's second half whose Finish fails with err.
type pending struct {
	ev  *events
	err error
	// written, if set, reports whether the command file was written to
	// (the destroy command), recorded at Abort.
	written func() bool
}

func (p *pending) Finish([]byte) (int, error) {
	p.ev.add("finish")
	return 7, p.err
}

func (p *pending) Abort() {
	if p.written != nil && p.written() {
		p.ev.add("abort after destroy")
		return
	}
	p.ev.add("abort")
}

// driverContext is a provider.Context that records its Close and whether
// the command file was still open then.
type driverContext struct {
	provider.Context
	ev *events
	fd int
}

func (d *driverContext) Close() error {
	if _, err := unix.FcntlInt(uintptr(d.fd), unix.F_GETFD, 0); err != nil {
		d.ev.add("driver close after the file")
	} else {
		d.ev.add("driver close")
	}
	return nil
}

// pipeContext is a Context on the write end of a pipe (or, with readEnd,
// on its read end, which refuses commands) and the other end.
func pipeContext(t *testing.T, readEnd bool) (*Context, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	file, other := w, r
	if readEnd {
		file, other = r, w
	}
	t.Cleanup(func() { other.Close() })
	c, err := NewContext("fake0", file, abi.RDMA_DRIVER_UNKNOWN)
	if err != nil || c.Provider != nil {
		t.Fatalf("NewContext = %v, %v; want no provider", c, err)
	}
	return c, other
}

func destroyCmd() *ucmd.Cmd {
	req := abi.DestroyCQ{CQHandle: 3}
	var resp abi.DestroyCQResp
	return &ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DESTROY_CQ, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp)}
}

func TestFinish(t *testing.T) {
	fail := errors.New("fake: cannot map the queue")
	t.Run("ok", func(t *testing.T) {
		c, _ := pipeContext(t, false)
		defer c.Close()
		ev := &events{}
		v, err := Finish[int](c, &pending{ev: ev}, nil, destroyCmd())
		if v != 7 || err != nil || !slices.Equal(ev.got, []string{"finish"}) {
			t.Errorf("Finish = %d, %v, events %q; want 7, nil, [finish]", v, err, ev.got)
		}
	})
	t.Run("destroy then abort", func(t *testing.T) {
		c, r := pipeContext(t, false)
		defer c.Close()
		ev := &events{}
		written := func() bool {
			var b [64]byte
			unix.SetNonblock(int(r.Fd()), true)
			n, _ := unix.Read(int(r.Fd()), b[:])
			return n > 0
		}
		_, err := Finish[int](c, &pending{ev: ev, err: fmt.Errorf("%w", provider.ErrInvalid), written: written}, nil, destroyCmd())
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Finish = %v, want ErrInvalid (Public)", err)
		}
		if want := []string{"finish", "abort after destroy"}; !slices.Equal(ev.got, want) {
			t.Errorf("events %q, want %q", ev.got, want)
		}
	})
	t.Run("destroy fails", func(t *testing.T) {
		c, _ := pipeContext(t, true)
		ev := &events{}
		_, err := Finish[int](c, &pending{ev: ev, err: fail}, nil, destroyCmd())
		if !errors.Is(err, fail) {
			t.Errorf("Finish = %v, want %v", err, fail)
		}
		if want := []string{"finish"}; !slices.Equal(ev.got, want) {
			t.Errorf("before Close: events %q, want %q", ev.got, want)
		}
		c.Provider = &driverContext{ev: ev, fd: c.FD.Int()}
		c.Close()
		if want := []string{"finish", "driver close", "abort"}; !slices.Equal(ev.got, want) {
			t.Errorf("after Close: events %q, want %q", ev.got, want)
		}
	})
	t.Run("closed context", func(t *testing.T) {
		c, _ := pipeContext(t, false)
		c.Close()
		ev := &events{}
		Finish[int](c, &pending{ev: ev, err: fail}, nil, destroyCmd())
		if want := []string{"finish", "abort"}; !slices.Equal(ev.got, want) {
			t.Errorf("events %q, want %q", ev.got, want)
		}
	})
}

// TestCloseOrder checks that Close releases the objects, then closes the
// driver's context, then the command file.
func TestCloseOrder(t *testing.T) {
	c, _ := pipeContext(t, false)
	ev := &events{}
	c.Provider = &driverContext{ev: ev, fd: c.FD.Int()}
	c.Add(nil, func() { ev.add("release") })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.FcntlInt(uintptr(c.FD.Int()), unix.F_GETFD, 0); err == nil {
		t.Error("the command file is still open")
	}
	if want := []string{"release", "driver close"}; !slices.Equal(ev.got, want) {
		t.Errorf("events %q, want %q", ev.got, want)
	}
}

// teardownContext is a driverContext with provider.Teardown, recording
// whether the command file was still open at Closing and Closed.
type teardownContext struct{ driverContext }

func (d *teardownContext) open() bool {
	_, err := unix.FcntlInt(uintptr(d.fd), unix.F_GETFD, 0)
	return err == nil
}

func (d *teardownContext) Closing() {
	if d.open() {
		d.ev.add("closing")
	} else {
		d.ev.add("closing after the file")
	}
}

func (d *teardownContext) Closed() {
	if d.open() {
		d.ev.add("closed before the file")
	} else {
		d.ev.add("closed")
	}
}

// TestCloseTeardown checks that a driver with provider.Teardown hears
// Closing before any object is released and Closed only once the command
// file is closed (so that the memory it kept for the objects outlives the
// kernel's objects), before what afterClose deferred.
func TestCloseTeardown(t *testing.T) {
	c, _ := pipeContext(t, false)
	ev := &events{}
	c.Provider = &teardownContext{driverContext{ev: ev, fd: c.FD.Int()}}
	c.Add(nil, func() { ev.add("release") })
	c.Add(nil, func() { ev.add("release") })
	c.afterClose(func() { ev.add("after close") })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"closing", "release", "release", "driver close", "closed", "after close"}
	if !slices.Equal(ev.got, want) {
		t.Errorf("events %q, want %q", ev.got, want)
	}
	// Idempotent: a second Close tells the driver nothing.
	c.Close()
	if !slices.Equal(ev.got, want) {
		t.Errorf("after a second Close: events %q, want %q", ev.got, want)
	}
}

// TestUARMethods checks the framing of the mlx5 UAR object methods: the
// object, the method and the attributes whose values go inline.
func TestUARMethods(t *testing.T) {
	for _, tc := range []struct {
		name       string
		m          *ucmd.Method
		object, id uint16
		attrs      map[uint16]uint64
	}{
		{"alloc NC", allocUARMethod(abi.MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC), 0x1008, 0x1000,
			map[uint16]uint64{0x1000: 0, 0x1001: 1}},
		{"alloc BF", allocUARMethod(abi.MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF), 0x1008, 0x1000,
			map[uint16]uint64{0x1000: 0, 0x1001: 0}},
		{"destroy", freeUARMethod(7), 0x1008, 0x1001,
			map[uint16]uint64{0x1000: 7}},
	} {
		if tc.m.Object != tc.object || tc.m.ID != tc.id {
			t.Errorf("%s: object %#x method %#x, want %#x %#x", tc.name, tc.m.Object, tc.m.ID, tc.object, tc.id)
		}
		for id, want := range tc.attrs {
			if got, ok := tc.m.Data(id); !ok || got != want {
				t.Errorf("%s: attribute %#x = %d, %v; want %d", tc.name, id, got, ok, want)
			}
		}
	}
}
