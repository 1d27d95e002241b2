package mr

import (
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestAdviseDevice asks each device for advice on a region. siw has no
// ADVISE_MR, nor has rxe without on-demand paging (Linux 6.1, 6.12): both
// calls are errors.ErrUnsupported there, the sentinel matched through
// uverbs.ErrUnsupported. A device with ODP takes a prefetch of an ODP
// region (uverbs' TestODP moves data through one).
func TestAdviseDevice(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, pd := setup(t, d)
		attr, err := ctx.QueryDevice()
		if err != nil {
			t.Fatal(err)
		}
		odp := attr.ODPGeneralCaps&uverbs.ODPSupport != 0
		access := uverbs.LocalWrite | uverbs.RemoteWrite
		if odp {
			access |= uverbs.OnDemand
		}
		buf, err := Alloc(1 << 16)
		if err != nil {
			t.Fatal(err)
		}
		defer Free(buf)
		m, err := Register(pd, buf, access)
		if err != nil {
			t.Fatalf("Register %#x: %v", uint32(access), err)
		}
		defer m.Close()
		errOne := m.Advise(PrefetchWrite, AdviseFlush, 4096, 8192)
		errList := Advise(pd, Prefetch, 0, uverbs.SGE{Addr: m.Addr(), Length: 64, LKey: m.LKey()})
		t.Logf("%s on Linux %s (ODP %v): MR.Advise: %v; Advise: %v", d, testenv.KernelRelease(), attr.ODPGeneralCaps, errOne, errList)
		if !odp {
			for _, err := range []error{errOne, errList} {
				if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, uverbs.ErrUnsupported) {
					t.Errorf("advice on %s without ODP: %v, want ErrUnsupported", d, err)
				}
			}
			return
		}
		for _, err := range []error{errOne, errList} {
			if err != nil {
				t.Errorf("prefetch of an ODP region: %v", err)
			}
		}
	})
}
