package uverbs

import (
	"testing"
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
)

// TestSendWRLayout pins every field of SendWR and of provider.SendWR to
// the same offset, as sendView needs: the drivers read the caller's
// request through it. MW's pointer shares its slot with MWRKey, which a
// driver reads only from a copy (a bind never takes the view).
func TestSendWRLayout(t *testing.T) {
	var u SendWR
	var p provider.SendWR
	for _, c := range []struct {
		name     string
		pub, drv uintptr
		want     uintptr
	}{
		{"ID", unsafe.Offsetof(u.ID), unsafe.Offsetof(p.ID), 0},
		{"Opcode", unsafe.Offsetof(u.Opcode), unsafe.Offsetof(p.Opcode), 8},
		{"Flags", unsafe.Offsetof(u.Flags), unsafe.Offsetof(p.Flags), 12},
		{"SGE", unsafe.Offsetof(u.SGE), unsafe.Offsetof(p.SGE), 16},
		{"Imm", unsafe.Offsetof(u.Imm), unsafe.Offsetof(p.Imm), 40},
		{"RemoteAddr", unsafe.Offsetof(u.RemoteAddr), unsafe.Offsetof(p.RemoteAddr), 48},
		{"RKey", unsafe.Offsetof(u.RKey), unsafe.Offsetof(p.RKey), 56},
		{"CompareAdd", unsafe.Offsetof(u.CompareAdd), unsafe.Offsetof(p.CompareAdd), 64},
		{"Swap", unsafe.Offsetof(u.Swap), unsafe.Offsetof(p.Swap), 72},
		{"Length", unsafe.Offsetof(u.Length), unsafe.Offsetof(p.Length), 80},
		{"FlushType", unsafe.Offsetof(u.FlushType), unsafe.Offsetof(p.FlushType), 84},
		{"FlushLevel", unsafe.Offsetof(u.FlushLevel), unsafe.Offsetof(p.FlushLevel), 85},
		{"AtomicData", unsafe.Offsetof(u.AtomicData), unsafe.Offsetof(p.AtomicData), 86},
		{"AH", unsafe.Offsetof(u.AH), unsafe.Offsetof(p.AH), 96},
		{"RemoteQPN", unsafe.Offsetof(u.RemoteQPN), unsafe.Offsetof(p.RemoteQPN), 104},
		{"RemoteQKey", unsafe.Offsetof(u.RemoteQKey), unsafe.Offsetof(p.RemoteQKey), 108},
		{"MW / MWRKey", unsafe.Offsetof(u.MW), unsafe.Offsetof(p.MWRKey), 112},
		{"Bind.LKey", unsafe.Offsetof(u.Bind) + unsafe.Offsetof(u.Bind.LKey), unsafe.Offsetof(p.BindLKey), 120},
		{"Bind.Addr", unsafe.Offsetof(u.Bind) + unsafe.Offsetof(u.Bind.Addr), unsafe.Offsetof(p.BindAddr), 128},
		{"Bind.Length", unsafe.Offsetof(u.Bind) + unsafe.Offsetof(u.Bind.Length), unsafe.Offsetof(p.BindLength), 136},
		{"Bind.Access", unsafe.Offsetof(u.Bind) + unsafe.Offsetof(u.Bind.Access), unsafe.Offsetof(p.BindAccess), 144},
		{"size", unsafe.Sizeof(u), unsafe.Sizeof(p), 152},
	} {
		if c.pub != c.want || c.drv != c.want {
			t.Errorf("%s: SendWR at %d, provider.SendWR at %d, want %d", c.name, c.pub, c.drv, c.want)
		}
	}
	// The SGE slices' elements too: the driver walks the caller's array.
	var us SGE
	var ps provider.SGE
	if unsafe.Sizeof(us) != 16 || unsafe.Sizeof(ps) != 16 || unsafe.Offsetof(us.Length) != unsafe.Offsetof(ps.Length) ||
		unsafe.Offsetof(us.LKey) != unsafe.Offsetof(ps.LKey) {
		t.Error("SGE and provider.SGE differ in layout")
	}
}

func TestRecvWRLayout(t *testing.T) {
	var u RecvWR
	var p provider.RecvWR
	if unsafe.Offsetof(u.ID) != unsafe.Offsetof(p.ID) || unsafe.Offsetof(u.SGE) != unsafe.Offsetof(p.SGE) ||
		unsafe.Sizeof(u) != 32 || unsafe.Sizeof(p) != 32 {
		t.Errorf("RecvWR: ID at %d/%d, SGE at %d/%d, size %d/%d; want 0, 8, 32", unsafe.Offsetof(u.ID), unsafe.Offsetof(p.ID),
			unsafe.Offsetof(u.SGE), unsafe.Offsetof(p.SGE), unsafe.Sizeof(u), unsafe.Sizeof(p))
	}
}
