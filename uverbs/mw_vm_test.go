package uverbs_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// TestMemoryWindow binds a type 2 window over 4 KiB of a region (rxe):
// the bind completes as BIND_MW, the peer's RDMA read through the
// window's new rkey returns the window's bytes (and so through a type 1
// window over another page), and after a local invalidate of the type 2
// window's rkey the same read is a remote access error. siw has
// no memory windows: AllocMW is EOPNOTSUPP.
func TestMemoryWindow(t *testing.T) {
	testenv.CheckLeaks(t)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		r := newRig(t, d)
		if d.Driver == "siw" {
			if _, err := r.pd.AllocMW(uverbs.MWType2); !errors.Is(err, syscall.EOPNOTSUPP) {
				t.Fatalf("siw AllocMW = %v, want EOPNOTSUPP", err)
			}
			return
		}
		// The rig's region has no MWBind: a region of its own.
		buf, err := mr.Alloc(3 * 4096)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mr.Free(buf) })
		m, err := mr.Register(r.pd, buf, uverbs.LocalWrite|uverbs.RemoteRead|uverbs.AccessMWBind)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		copy(buf[4096:], "through the window")

		mw, err := r.pd.AllocMW(uverbs.MWType2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := mw.Close(); err != nil {
				t.Errorf("MW close: %v", err)
			}
		})
		if mw.Type() != uverbs.MWType2 || mw.PD() != r.pd {
			t.Errorf("MW type %d, PD %p; want 2, %p", mw.Type(), mw.PD(), r.pd)
		}
		a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, nil)
		r.connect(t, a, b.Num())
		r.connect(t, b, a.Num())
		key := uverbs.NextRKey(mw.RKey())
		if key == mw.RKey() || key&^0xff != mw.RKey()&^0xff {
			t.Fatalf("NextRKey(%#x) = %#x", mw.RKey(), key)
		}
		if _, err := a.PostSend([]uverbs.SendWR{{ID: 1, Opcode: uverbs.WRBindMW, Flags: uverbs.SendSignaled, MW: mw, RKey: key,
			Bind: uverbs.MWBind{LKey: m.LKey(), Addr: m.Addr() + 4096, Length: 4096, Access: uverbs.RemoteRead}}}); err != nil {
			t.Fatal(err)
		}
		if wc := r.poll(t, 1)[0]; wc.Status != cq.Success || wc.Opcode != cq.OpBindMW || wc.ID != 1 {
			t.Fatalf("bind completion %+v, want BIND_MW success", wc)
		}
		read := func(id uint64) cq.WC {
			t.Helper()
			clear(r.buf[:18])
			if _, err := b.PostSend([]uverbs.SendWR{{ID: id, Opcode: uverbs.WRRDMARead, Flags: uverbs.SendSignaled,
				SGE: []uverbs.SGE{r.sge(0, 18)}, RemoteAddr: m.Addr() + 4096, RKey: key}}); err != nil {
				t.Fatal(err)
			}
			return r.poll(t, 1)[0]
		}
		if wc := read(2); wc.Status != cq.Success || string(r.buf[:18]) != "through the window" {
			t.Fatalf("read through the window: %+v, %q", wc, r.buf[:18])
		}
		// A type 1 window over the first page, bound on the same QP,
		// reads the same way.
		mw1, err := r.pd.AllocMW(uverbs.MWType1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := mw1.Close(); err != nil {
				t.Errorf("type 1 MW close: %v", err)
			}
		})
		copy(buf, "type one window")
		key1 := uverbs.NextRKey(mw1.RKey())
		if _, err := a.PostSend([]uverbs.SendWR{{ID: 10, Opcode: uverbs.WRBindMW, Flags: uverbs.SendSignaled, MW: mw1, RKey: key1,
			Bind: uverbs.MWBind{LKey: m.LKey(), Addr: m.Addr(), Length: 4096, Access: uverbs.RemoteRead}}}); err != nil {
			t.Fatal(err)
		}
		if wc := r.poll(t, 1)[0]; wc.Status != cq.Success || wc.Opcode != cq.OpBindMW {
			t.Fatalf("type 1 bind completion %+v", wc)
		}
		clear(r.buf[:15])
		if _, err := b.PostSend([]uverbs.SendWR{{ID: 11, Opcode: uverbs.WRRDMARead, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{r.sge(0, 15)}, RemoteAddr: m.Addr(), RKey: key1}}); err != nil {
			t.Fatal(err)
		}
		if wc := r.poll(t, 1)[0]; wc.Status != cq.Success || string(r.buf[:15]) != "type one window" {
			t.Fatalf("read through the type 1 window: %+v, %q", wc, r.buf[:15])
		}

		if _, err := a.PostSend([]uverbs.SendWR{{ID: 3, Opcode: uverbs.WRLocalInv, Flags: uverbs.SendSignaled, Imm: key}}); err != nil {
			t.Fatal(err)
		}
		if wc := r.poll(t, 1)[0]; wc.Status != cq.Success || wc.Opcode != cq.OpLocalInv {
			t.Fatalf("local invalidate completion %+v", wc)
		}
		if wc := read(4); wc.Status != cq.RemAccessErr {
			t.Errorf("read through the invalidated window: %+v, want a remote access error", wc)
		}

		bind := func(mw *uverbs.MW, sge []uverbs.SGE, access uverbs.Access) func() error {
			return func() error {
				_, err := a.PostSend([]uverbs.SendWR{{Opcode: uverbs.WRBindMW, MW: mw, SGE: sge, RKey: uverbs.NextRKey(key),
					Bind: uverbs.MWBind{LKey: m.LKey(), Addr: m.Addr(), Length: 8, Access: access}}})
				return err
			}
		}
		closed, err := r.pd.AllocMW(uverbs.MWType2)
		if err != nil {
			t.Fatal(err)
		}
		if err := closed.Close(); err != nil {
			t.Fatal(err)
		}
		n := testenv.RunBad(t, nil, []testenv.BadCase{
			testenv.Bad("bind: closed window", uverbs.ErrClosed, bind(closed, nil, uverbs.RemoteRead)),
			testenv.Bad("bind: with an SGE", uverbs.ErrInvalid, bind(mw, []uverbs.SGE{r.sge(0, 8)}, uverbs.RemoteRead)),
			testenv.Bad("bind: zero-based", uverbs.ErrInvalid, bind(mw, nil, uverbs.RemoteRead|uverbs.ZeroBased)),
			testenv.Bad("bind: local write access", uverbs.ErrInvalid, bind(mw, nil, uverbs.LocalWrite)),
		})
		t.Logf("%d bad binds tried", n)
	})
}
