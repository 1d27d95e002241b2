package mr

import (
	"errors"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

func setup(t *testing.T, d testenv.Dev) (*uverbs.Context, *uverbs.PD) {
	t.Helper()
	ctx, err := uverbs.OpenName(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatalf("AllocPD: %v", err)
	}
	return ctx, pd
}

func TestRegister(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		_, pd := setup(t, d)
		buf, err := Alloc(64 << 10)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Register(pd, buf, uverbs.LocalWrite|uverbs.RemoteRead|uverbs.RemoteWrite)
		if err != nil {
			t.Fatalf("Register: %v", err)
		}
		if m.Addr() != uint64(base(buf)) || m.Len() != len(buf) {
			t.Errorf("MR covers %#x+%d, want %#x+%d", m.Addr(), m.Len(), base(buf), len(buf))
		}
		t.Logf("%s: lkey %#x rkey %#x", d.Name, m.LKey(), m.RKey())

		// Wrong destroy order: the PD and the memory are still in use.
		if err := pd.Close(); !errors.Is(err, uverbs.ErrBusy) || !errors.Is(err, syscall.EBUSY) {
			t.Errorf("PD.Close with a registered MR: %v, want ErrBusy wrapping EBUSY", err)
		}
		if err := Free(buf); !errors.Is(err, ErrRegistered) {
			t.Errorf("Free of registered memory: %v, want ErrRegistered", err)
		}
		// Both stay usable: a second region of the same memory registers.
		m2, err := Register(pd, buf[4096:8192], uverbs.LocalWrite)
		if err != nil {
			t.Fatalf("second Register after the failed PD close: %v", err)
		}
		for _, r := range []*MR{m2, m, m} { // m twice: Close is idempotent
			if err := r.Close(); err != nil {
				t.Errorf("MR.Close: %v", err)
			}
		}
		if err := pd.Close(); err != nil {
			t.Errorf("PD.Close: %v", err)
		}
		if err := Free(buf); err != nil {
			t.Errorf("Free: %v", err)
		}
	})
}

func TestRegisterRefuses(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, pd := setup(t, d)
		buf, err := Alloc(4096)
		if err != nil {
			t.Fatal(err)
		}
		defer Free(buf)
		tests := []struct {
			name   string
			buf    []byte
			access uverbs.Access
			want   error
		}{
			{"Go heap memory", make([]byte, 4096), uverbs.LocalWrite, ErrNotMapped},
			{"empty", buf[:0], uverbs.LocalWrite, syscall.EINVAL},
			{"remote write without local write", buf, uverbs.RemoteWrite, syscall.EINVAL},
			{"remote atomic without local write", buf, uverbs.RemoteAtomic, syscall.EINVAL},
		}
		for _, tt := range tests {
			if m, err := Register(pd, tt.buf, tt.access); !errors.Is(err, tt.want) {
				t.Errorf("%s: Register = %v, %v; want %v", tt.name, m, err, tt.want)
			}
		}
		// Nothing was left registered by the refusals.
		if err := pd.Close(); err != nil {
			t.Errorf("PD.Close after refused registrations: %v", err)
		}
		ctx.Close()
		if _, err := Register(pd, buf, uverbs.LocalWrite); !errors.Is(err, uverbs.ErrClosed) {
			t.Errorf("Register after close: %v, want ErrClosed", err)
		}
	})
}

// TestAllocRegister allocates and registers in one call and undoes both
// with one Close; a refused registration leaves no memory behind (the
// leak check counts the mappings).
func TestAllocRegister(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		_, pd := setup(t, d)
		b, err := AllocRegister(pd, 10000, uverbs.LocalWrite|uverbs.RemoteWrite)
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() != 10000 || len(b.Bytes()) != 10000 || b.Addr() != uint64(base(b.Bytes())) || b.MR().LKey() != b.LKey() {
			t.Errorf("Buffer covers %#x+%d, slice %d bytes", b.Addr(), b.Len(), len(b.Bytes()))
		}
		if s := b.SGE(); s.Addr != b.Addr() || s.Length != 10000 || s.LKey != b.LKey() {
			t.Errorf("SGE %+v", s)
		}
		b.Bytes()[9999] = 1
		if err := pd.Close(); !errors.Is(err, uverbs.ErrBusy) {
			t.Errorf("PD.Close with a Buffer: %v, want ErrBusy", err)
		}
		for range 2 {
			if err := b.Close(); err != nil {
				t.Errorf("Buffer.Close: %v", err)
			}
		}
		if b.Bytes() != nil {
			t.Error("Bytes after Close")
		}
		if _, err := AllocRegister(pd, 4096, uverbs.RemoteWrite); !errors.Is(err, uverbs.ErrInvalid) {
			t.Errorf("AllocRegister with RemoteWrite alone: %v, want ErrInvalid", err)
		}
		if err := pd.Close(); err != nil {
			t.Errorf("PD.Close: %v", err)
		}
	})
}
