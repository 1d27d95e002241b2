//go:build linux

package uverbs_test

import (
	"encoding/binary"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// needODP skips t unless the device reports on-demand paging for RC
// reads and writes: rxe has it from Linux 6.14 on.
func needODP(t *testing.T, d testenv.Dev, attr *uverbs.DeviceAttr) {
	t.Helper()
	const rw = uverbs.ODPRead | uverbs.ODPWrite
	if attr.ODPGeneralCaps&uverbs.ODPSupport != 0 && attr.ODPRCCaps&rw == rw {
		return
	}
	if d.Driver == "rxe" {
		if testenv.KernelAtLeast(6, 14) {
			t.Fatalf("rxe on Linux %s reports no ODP for RC reads and writes (general %v, RC %v); it has had it since 6.14", testenv.KernelRelease(), attr.ODPGeneralCaps, attr.ODPRCCaps)
		}
		t.Skipf("no ODP on rxe before 6.14 (Linux %s)", testenv.KernelRelease())
	}
	t.Skipf("%s reports no on-demand paging for RC reads and writes (general %v, RC %v)", d, attr.ODPGeneralCaps, attr.ODPRCCaps)
}

// TestODP registers memory with on-demand paging that nothing has
// touched, so that no page of it exists until the device's access faults
// it in, and moves data into and out of it with RDMA writes, reads and
// atomics (the rig's QP A the requester, its region the other side).
// Then it drops the pages with MADV_DONTNEED, which must invalidate the
// device's mapping: the device then reads what the CPU wrote since, not
// the old pages. Last, it prefetches with Advise.
//
// Every transfer starts at a page boundary: 6.17's and 6.18's rxe copy
// to and from an ODP page at the page's start whatever the address's
// offset in it (kernelbugs TestRXEODPPageOffset, docs/kernel-notes.md).
// And the device never writes a page it has only read since the page
// was last dropped: 6.18's rxe maps the shared zero page for the read and
// then writes into it (kernelbugs TestRXEODPZeroPage).
func TestODP(t *testing.T) {
	d := testenv.RoCE(t)
	r, a, _ := rcPair(t, d)
	attr, err := r.ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	needODP(t, d, &attr)
	t.Logf("%s on Linux %s: ODP %v, RC %v", d, testenv.KernelRelease(), attr.ODPGeneralCaps, attr.ODPRCCaps)

	pg := os.Getpagesize()
	const pages = 16
	odp, err := mr.Alloc(pages * pg) // mapped, never touched
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Free(odp) })
	region, err := mr.Register(r.pd, odp, rigAccess|uverbs.OnDemand)
	if err != nil {
		t.Fatalf("Register with OnDemand: %v", err)
	}
	t.Cleanup(func() {
		if err := region.Close(); err != nil {
			t.Errorf("ODP MR close: %v", err)
		}
	})

	page := func(i int) int { return i * pg }
	osge := func(off, n int) uverbs.SGE {
		return uverbs.SGE{Addr: region.Addr() + uint64(off), Length: uint32(n), LKey: region.LKey()}
	}
	// post runs one signaled request on A and waits for its success.
	post := func(t *testing.T, wr uverbs.SendWR) {
		t.Helper()
		wr.Flags |= uverbs.SendSignaled
		if _, err := a.PostSend([]uverbs.SendWR{wr}); err != nil {
			t.Fatalf("PostSend %v: %v", wr.Opcode, err)
		}
		if wc := r.poll(t, 1)[0]; wc.Status != cq.Success {
			t.Fatalf("%v: completion %v (vendor error %#x)", wr.Opcode, wc.Status, wc.VendorErr)
		}
	}
	// write puts s from the rig's buffer into the ODP region at off.
	write := func(t *testing.T, off int, s string) {
		t.Helper()
		copy(r.buf[offA:], s)
		post(t, uverbs.SendWR{ID: 1, Opcode: uverbs.WRRDMAWrite, SGE: []uverbs.SGE{r.sge(offA, len(s))},
			RemoteAddr: region.Addr() + uint64(off), RKey: region.RKey()})
	}
	// read returns n bytes of the ODP region at off, read by the device
	// into the rig's buffer (which is first filled with 0xee).
	read := func(t *testing.T, off, n int) []byte {
		t.Helper()
		dst := r.buf[offB : offB+n]
		for i := range dst {
			dst[i] = 0xee
		}
		post(t, uverbs.SendWR{ID: 2, Opcode: uverbs.WRRDMARead, SGE: []uverbs.SGE{r.sge(offB, n)},
			RemoteAddr: region.Addr() + uint64(off), RKey: region.RKey()})
		return dst
	}
	u64 := func(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

	t.Run("write into untouched pages", func(t *testing.T) {
		write(t, page(0), "odp write")
		verbstest.WantBytes(t, odp[page(0):page(0)+9], "odp write")
	})
	t.Run("read untouched pages", func(t *testing.T) {
		if got := read(t, page(1), pg+16); string(got) != string(make([]byte, pg+16)) {
			t.Errorf("read of never-written pages 1 and 2: % x, want zeros", got)
		}
	})
	t.Run("read into untouched pages", func(t *testing.T) {
		// The ODP region is the local side: the read's response lands in
		// pages no one has touched.
		copy(r.buf[offB+64:], "rig data")
		post(t, uverbs.SendWR{ID: 3, Opcode: uverbs.WRRDMARead, SGE: []uverbs.SGE{osge(page(3), 8)},
			RemoteAddr: r.mr.Addr() + offB + 64, RKey: r.mr.RKey()})
		verbstest.WantBytes(t, odp[page(3):page(3)+8], "rig data")
	})
	t.Run("atomics", func(t *testing.T) {
		if attr.ODPRCCaps&uverbs.ODPAtomic == 0 {
			t.Skipf("%s has no ODP atomics (RC %v)", d, attr.ODPRCCaps)
		}
		// Both sides in untouched pages: the target at page 4, the old
		// value returned into page 5.
		post(t, uverbs.SendWR{ID: 4, Opcode: uverbs.WRAtomicFetchAndAdd, SGE: []uverbs.SGE{osge(page(5), 8)},
			RemoteAddr: region.Addr() + uint64(page(4)), RKey: region.RKey(), CompareAdd: 5})
		if u64(odp, page(4)) != 5 || u64(odp, page(5)) != 0 {
			t.Errorf("fetch and add: target %d (want 5), old %d (want 0)", u64(odp, page(4)), u64(odp, page(5)))
		}
		post(t, uverbs.SendWR{ID: 5, Opcode: uverbs.WRAtomicCmpAndSwp, SGE: []uverbs.SGE{r.sge(offA+512, 8)},
			RemoteAddr: region.Addr() + uint64(page(4)), RKey: region.RKey(), CompareAdd: 5, Swap: 77})
		if u64(odp, page(4)) != 77 || u64(r.buf, offA+512) != 5 {
			t.Errorf("compare and swap: target %d (want 77), old %d (want 5)", u64(odp, page(4)), u64(r.buf, offA+512))
		}
	})
	t.Run("after MADV_DONTNEED", func(t *testing.T) {
		// Dropping the pages invalidates the device's mapping of them
		// (the MMU notifier): private anonymous memory reads zeros
		// afterwards, and a page the CPU writes next is a new page,
		// which the device must fault in rather than use the old one.
		if err := unix.Madvise(odp, unix.MADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		if odp[page(0)] != 0 {
			t.Fatalf("after MADV_DONTNEED page 0 still holds %q", odp[page(0):page(0)+9])
		}
		if got := read(t, page(3), 8); string(got) != string(make([]byte, 8)) {
			t.Errorf("read where the device wrote before MADV_DONTNEED: %q, want zeros", got)
		}
		copy(odp[page(0):], "cpu wrote this")
		verbstest.WantBytes(t, read(t, page(0), 14), "cpu wrote this")
		// Not page 3, which the read above left mapped to the shared
		// zero page: 6.18's rxe writes into that page (kernelbugs
		// TestRXEODPZeroPage), which corrupts every process's fresh
		// memory. Page 5 was dropped and not read since.
		write(t, page(5), "written again")
		verbstest.WantBytes(t, odp[page(5):page(5)+13], "written again")
		if attr.ODPRCCaps&uverbs.ODPAtomic != 0 {
			post(t, uverbs.SendWR{ID: 6, Opcode: uverbs.WRAtomicFetchAndAdd, SGE: []uverbs.SGE{r.sge(offA+512, 8)},
				RemoteAddr: region.Addr() + uint64(page(4)), RKey: region.RKey(), CompareAdd: 1})
			if u64(odp, page(4)) != 1 || u64(r.buf, offA+512) != 0 {
				t.Errorf("fetch and add after MADV_DONTNEED: target %d (want 1), old %d (want 0)", u64(odp, page(4)), u64(r.buf, offA+512))
			}
		}
	})
	t.Run("prefetch", func(t *testing.T) {
		err := region.Advise(mr.PrefetchWrite, mr.AdviseFlush, page(6), 2*pg)
		if err != nil {
			t.Fatalf("Advise PREFETCH_WRITE, FLUSH: %v", err)
		}
		// One write per page: on 6.18.15 a write that crosses into the
		// next ODP page loses that page's part (kernel-notes), as
		// offsets within a page are lost (TestRXEODPPageOffset).
		write(t, page(6), "prefetched for writing")
		verbstest.WantBytes(t, odp[page(6):page(6)+22], "prefetched for writing")
		write(t, page(7), "its second page")
		verbstest.WantBytes(t, odp[page(7):page(7)+15], "its second page")

		copy(odp[page(8):], "prefetched for reading")
		if err := region.Advise(mr.Prefetch, mr.AdviseFlush, page(8), pg); err != nil {
			t.Fatalf("Advise PREFETCH, FLUSH: %v", err)
		}
		verbstest.WantBytes(t, read(t, page(8), 22), "prefetched for reading")

		// Without FLUSH the kernel may prefetch in the background; the
		// data is right either way.
		if err := region.Advise(mr.PrefetchWrite, 0, page(9), pg); err != nil {
			t.Fatalf("Advise PREFETCH_WRITE: %v", err)
		}
		write(t, page(9), "async prefetch")
		verbstest.WantBytes(t, odp[page(9):page(9)+14], "async prefetch")
		if err := region.Advise(mr.PrefetchNoFault, mr.AdviseFlush, 0, len(odp)); err != nil {
			t.Errorf("Advise PREFETCH_NO_FAULT, FLUSH of the whole region: %v", err)
		}

		// Several ranges in one call, after the pages were dropped.
		if err := unix.Madvise(odp[page(10):page(12)], unix.MADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		copy(odp[page(11):], "refaulted")
		if err := mr.Advise(r.pd, mr.PrefetchWrite, mr.AdviseFlush, osge(page(10), 64), osge(page(11), pg)); err != nil {
			t.Fatalf("mr.Advise of two ranges: %v", err)
		}
		verbstest.WantBytes(t, read(t, page(11), 9), "refaulted")
		write(t, page(10), "into 10")
		verbstest.WantBytes(t, odp[page(10):page(10)+7], "into 10")
	})
}
