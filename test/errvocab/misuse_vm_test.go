package errvocab_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/rsocket"
	"github.com/purerdma/purerdma/uverbs"
)

// misuse is one row of TestMisuse: a package, what is done wrong, and the
// sentinel the package must answer with. drivers, when set, limits the
// row to the drivers that lack the operation.
type misuse struct {
	pkg, what string
	want      error
	drivers   []string
	call      func() error
}

// errnoOf is the errno each shared sentinel must carry along.
var errnoOf = map[error]unix.Errno{
	uverbs.ErrClosed:      unix.EBADF,
	uverbs.ErrInvalid:     unix.EINVAL,
	uverbs.ErrUnsupported: unix.EOPNOTSUPP,
	uverbs.ErrQueueFull:   unix.ENOMEM,
}

// TestMisuse makes the same mistakes with every package on each device:
// use after Close, a zero or negative size or an empty buffer, an
// operation the device lacks. Each package must answer with the same
// sentinel, which also matches its errno. rpma adds its rows here.
func TestMisuse(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		f := newFixture(t, d)
		var rows []misuse
		rows = append(rows, f.closedRows(t, d)...)
		rows = append(rows, f.invalidRows(t)...)
		rows = append(rows, f.unsupportedRows(t)...)
		rows = append(rows, f.rpmaRows(t)...)
		for _, r := range rows {
			if r.drivers != nil && !contains(r.drivers, d.Driver) {
				continue // the device has the operation: no misuse to try
			}
			t.Run(r.pkg+"/"+r.what, func(t *testing.T) {
				err := r.call()
				if !errors.Is(err, r.want) {
					t.Fatalf("got %v, want %v", err, r.want)
				}
				if errno, ok := errnoOf[r.want]; ok && !errors.Is(err, errno) {
					t.Errorf("%v matches %v but not %v", err, r.want, errno)
				}
			})
		}
	})
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// fixture is one live object of each kind on a device, for the rows that
// need a working object to misuse.
type fixture struct {
	ctx *uverbs.Context
	pd  *uverbs.PD
	cq  *cq.CQ
	qp  *uverbs.QP
	buf []byte
	mr  *mr.MR
	ch  *rdmacm.EventChannel
	id  *rdmacm.ID
}

func newFixture(t *testing.T, d testenv.Dev) *fixture {
	t.Helper()
	f := &fixture{}
	var err error
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The buffer first: cleanups run last-in first-out, so it is freed
	// after the context's Close has deregistered it (mr.Free refuses
	// registered memory, and the leak check would find the mapping).
	f.buf, err = mr.Alloc(4096)
	must(err)
	t.Cleanup(func() {
		if err := mr.Free(f.buf); err != nil {
			t.Errorf("free the fixture's buffer: %v", err)
		}
	})
	f.ctx, err = uverbs.OpenName(d.Name)
	must(err)
	t.Cleanup(func() { f.ctx.Close() })
	f.pd, err = f.ctx.AllocPD()
	must(err)
	f.cq, err = cq.New(f.ctx, 4, nil)
	must(err)
	f.qp, err = f.pd.CreateQP(f.qpInit())
	must(err)
	f.mr, err = mr.Register(f.pd, f.buf, uverbs.LocalWrite)
	must(err)
	f.ch, err = rdmacm.NewEventChannel()
	must(err)
	t.Cleanup(func() { f.ch.Close() })
	f.id, err = f.ch.CreateID(rdmacm.TCP)
	must(err)
	t.Cleanup(func() { f.id.Close() })
	return f
}

func (f *fixture) qpInit() uverbs.QPInit {
	return uverbs.QPInit{Type: uverbs.RC, SendCQ: f.cq, RecvCQ: f.cq,
		Cap: uverbs.QPCap{MaxSendWR: 2, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1}}
}

// closedRows: each package's object, closed, then used.
func (f *fixture) closedRows(t *testing.T, d testenv.Dev) []misuse {
	t.Helper()
	ctx, err := uverbs.OpenName(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	ctx.Close()
	qp, err := f.pd.CreateQP(f.qpInit())
	if err != nil {
		t.Fatal(err)
	}
	qp.Close()
	c, err := cq.New(f.ctx, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	m, err := mr.Register(f.pd, f.buf, uverbs.LocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	id, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		t.Fatal(err)
	}
	id.Close()
	ch.Close()
	rows := []misuse{
		{pkg: "uverbs", what: "AllocPD on a closed Context", want: uverbs.ErrClosed,
			call: func() error { _, err := ctx.AllocPD(); return err }},
		{pkg: "uverbs", what: "PostSend on a closed QP", want: uverbs.ErrClosed,
			call: func() error { _, err := qp.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRSend}}); return err }},
		{pkg: "cq", what: "Poll on a closed CQ", want: uverbs.ErrClosed,
			call: func() error { _, err := c.Poll(make([]cq.WC, 1)); return err }},
		{pkg: "mr", what: "Reregister a closed MR", want: uverbs.ErrClosed,
			call: func() error { return m.Reregister(mr.ChangeAccess, nil, nil, uverbs.LocalWrite) }},
		{pkg: "rdmacm", what: "Bind a closed ID", want: uverbs.ErrClosed,
			call: func() error { return id.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), 0)) }},
		{pkg: "rdmacm", what: "CreateID on a closed EventChannel", want: uverbs.ErrClosed,
			call: func() error { _, err := ch.CreateID(rdmacm.TCP); return err }},
	}
	if d.Addr != "" {
		l, err := rsocket.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		rows = append(rows, misuse{pkg: "rsocket", what: "Accept on a closed Listener", want: uverbs.ErrClosed,
			call: func() error {
				_, err := l.Accept()
				if !errors.Is(err, net.ErrClosed) {
					return errors.Join(err, errors.New("does not match net.ErrClosed"))
				}
				return err
			}})
	}
	return rows
}

// invalidRows: sizes of zero or less, empty buffers and other arguments
// no call can take.
func (f *fixture) invalidRows(t *testing.T) []misuse {
	t.Helper()
	tooMany := make([]uverbs.SGE, f.qp.Cap().MaxSendSGE+1)
	return []misuse{
		{pkg: "uverbs", what: "CreateQP of an unknown type", want: uverbs.ErrInvalid,
			call: func() error {
				init := f.qpInit()
				init.Type = 99
				qp, err := f.pd.CreateQP(init)
				if err == nil {
					qp.Close()
				}
				return err
			}},
		{pkg: "uverbs", what: "PostSend of more SGEs than the QP takes", want: uverbs.ErrInvalid,
			call: func() error {
				_, err := f.qp.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRSend, SGE: tooMany}})
				return err
			}},
		{pkg: "cq", what: "New with 0 entries", want: uverbs.ErrInvalid,
			call: func() error {
				c, err := cq.New(f.ctx, 0, nil)
				if err == nil {
					c.Close()
				}
				return err
			}},
		{pkg: "cq", what: "Resize to -1 entries", want: uverbs.ErrInvalid,
			call: func() error { return f.cq.Resize(-1) }},
		{pkg: "mr", what: "Alloc of -1 bytes", want: uverbs.ErrInvalid,
			call: func() error { _, err := mr.Alloc(-1); return err }},
		{pkg: "mr", what: "Register a nil buffer", want: uverbs.ErrInvalid,
			call: func() error { _, err := mr.Register(f.pd, nil, uverbs.LocalWrite); return err }},
		{pkg: "mr", what: "Register Go memory", want: uverbs.ErrInvalid,
			call: func() error {
				_, err := mr.Register(f.pd, make([]byte, 64), uverbs.LocalWrite)
				if !errors.Is(err, mr.ErrNotMapped) {
					return errors.Join(err, errors.New("does not match mr.ErrNotMapped"))
				}
				return err
			}},
		{pkg: "rdmacm", what: "CreateID in an unknown port space", want: uverbs.ErrInvalid,
			call: func() error {
				id, err := f.ch.CreateID(rdmacm.PortSpace(0x999))
				if err == nil {
					id.Close()
				}
				return err
			}},
		{pkg: "rdmacm", what: "Connect with too much private data", want: uverbs.ErrInvalid,
			call: func() error {
				err := f.id.Connect(&rdmacm.ConnParam{PrivateData: make([]byte, 57)})
				if !errors.Is(err, rdmacm.ErrPrivateData) {
					return errors.Join(err, errors.New("does not match rdmacm.ErrPrivateData"))
				}
				return err
			}},
		{pkg: "rsocket", what: "Dial on network tcp", want: uverbs.ErrInvalid,
			call: func() error {
				c, err := rsocket.Dial(context.Background(), "tcp", "127.0.0.1:1")
				if err == nil {
					c.Close()
				}
				return err
			}},
	}
}

// unsupportedRows: operations the device lacks. siw has no memory
// windows, no CQ resize and no immediate data; neither driver
// re-registers a region's memory (ChangeBuffer).
func (f *fixture) unsupportedRows(t *testing.T) []misuse {
	t.Helper()
	other, err := mr.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Free(other) })
	siw := []string{"siw"}
	return []misuse{
		{pkg: "uverbs", what: "AllocMW", want: uverbs.ErrUnsupported, drivers: siw,
			call: func() error {
				mw, err := f.pd.AllocMW(uverbs.MWType2)
				if err == nil {
					mw.Close()
				}
				return err
			}},
		{pkg: "uverbs", what: "PostSend with immediate data", want: uverbs.ErrUnsupported, drivers: siw,
			call: func() error {
				_, err := f.qp.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRSendWithImm, Imm: 1}})
				return err
			}},
		{pkg: "cq", what: "Resize", want: uverbs.ErrUnsupported, drivers: siw,
			call: func() error { return f.cq.Resize(8) }},
		// rxe and siw only: mlx5's kernel re-registers memory.
		{pkg: "mr", what: "Reregister other memory", want: uverbs.ErrUnsupported, drivers: []string{"rxe", "siw"},
			call: func() error { return f.mr.Reregister(mr.ChangeBuffer, nil, other, 0) }},
	}
}
