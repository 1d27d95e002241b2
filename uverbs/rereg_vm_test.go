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

// TestReregister moves a region registered on a second PD to the rig's PD
// and gives it remote read (rxe): an RDMA read of it by a QP of the rig's
// PD then succeeds, and the second PD, no longer in use, closes. Taking
// remote read away again makes the next read a remote access error. A
// change of memory is EOPNOTSUPP on rxe, and every change on siw and on
// Linux 6.1's rxe (the test skips there after checking that). A hardware
// device runs the PD and access changes alone: what it does with a
// change of memory (mlx5 re-registers it) was never measured.
func TestReregister(t *testing.T) {
	testenv.CheckLeaks(t)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		r := newRig(t, d)
		pd2, err := r.ctx.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pd2.Close() })
		buf, err := mr.Alloc(4096)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mr.Free(buf) })
		m, err := mr.Register(pd2, buf, uverbs.LocalWrite)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		other, err := mr.Alloc(4096)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mr.Free(other) }) // freed already on rxe, below

		if d.Driver == "siw" {
			for _, c := range []mr.Change{mr.ChangePD, mr.ChangeAccess, mr.ChangeBuffer} {
				if err := m.Reregister(c, r.pd, other, uverbs.LocalWrite|uverbs.RemoteRead); !errors.Is(err, syscall.EOPNOTSUPP) {
					t.Errorf("siw Reregister(%#x) = %v, want EOPNOTSUPP", c, err)
				}
			}
			if err := pd2.Close(); !errors.Is(err, uverbs.ErrBusy) {
				t.Errorf("closing the region's PD after refused changes: %v, want ErrBusy", err)
			}
			return
		}

		if d.Hardware() {
			t.Logf("%s: Reregister(ChangeBuffer) not tried: EOPNOTSUPP is rxe's answer", d)
		} else if err := m.Reregister(mr.ChangeBuffer, nil, other, 0); !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Errorf("rxe Reregister(ChangeBuffer) = %v, want EOPNOTSUPP", err)
		}
		// The refused change left other unregistered: it frees.
		if err := mr.Free(other); err != nil {
			t.Errorf("Free of the memory a refused ChangeBuffer named: %v", err)
		}
		err = m.Reregister(mr.ChangePD|mr.ChangeAccess, r.pd, nil, uverbs.LocalWrite|uverbs.RemoteRead)
		if errors.Is(err, syscall.EOPNOTSUPP) && !testenv.KernelAtLeast(6, 12) {
			// Measured: rxe of Linux 6.1 has no rereg_user_mr at all,
			// 6.12's changes the PD and the access flags.
			testenv.NeedKernelFeature(t, d, false, "MR re-registration", "a release after 6.1 (6.12 has it)")
		}
		if err != nil {
			t.Fatalf("Reregister(PD, access): %v", err)
		}
		if err := pd2.Close(); err != nil {
			t.Errorf("closing the region's old PD: %v", err)
		}
		copy(buf, "reregistered")
		a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, nil)
		r.connect(t, a, b.Num())
		r.connect(t, b, a.Num())
		read := func(id uint64) cq.WC {
			t.Helper()
			if _, err := a.PostSend([]uverbs.SendWR{{ID: id, Opcode: uverbs.WRRDMARead, Flags: uverbs.SendSignaled,
				SGE: []uverbs.SGE{r.sge(0, 12)}, RemoteAddr: m.Addr(), RKey: m.RKey()}}); err != nil {
				t.Fatal(err)
			}
			return r.poll(t, 1)[0]
		}
		if wc := read(1); wc.Status != cq.Success || string(r.buf[:12]) != "reregistered" {
			t.Fatalf("read after Reregister: %+v, %q", wc, r.buf[:12])
		}
		if err := m.Reregister(mr.ChangeAccess, nil, nil, uverbs.LocalWrite); err != nil {
			t.Fatalf("Reregister(access): %v", err)
		}
		if wc := read(2); wc.Status != cq.RemAccessErr {
			t.Errorf("read after remote read was taken away: %+v, want a remote access error", wc)
		}
	})
}
