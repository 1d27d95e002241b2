package kernelbugs

import (
	"net/netip"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// TestRXEODPPageOffset writes 8 bytes by RDMA at offset 100 of a page of
// memory registered with on-demand paging, and reads 8 bytes the CPU put
// at offset 200 of another. A correct kernel puts and takes them there.
// rxe of Linux 6.18.15 copies at the page's start instead: since the ODP
// DMA mapping rework (6.17) __rxe_odp_mr_copy kmaps the page and copies
// to and from it without adding the offset within the page (its
// atomics still add it). So every ODP transfer that does not start at a
// page boundary reads or writes the wrong bytes, and reports success.
// uverbs TestODP and rpma TestODPRegions move data at page boundaries
// alone. Skipped where rxe has no ODP (before 6.14).
func TestRXEODPPageOffset(t *testing.T) {
	p := newODPPair(t)
	odp, plain, odpMR, plainMR, post := p.odp, p.plain, p.odpMR, p.plainMR, p.post
	pg := os.Getpagesize()
	copy(plain, "8 bytes!")
	post(uverbs.SendWR{Opcode: uverbs.WRRDMAWrite, SGE: []uverbs.SGE{{Addr: plainMR.Addr(), Length: 8, LKey: plainMR.LKey()}},
		RemoteAddr: odpMR.Addr() + 100, RKey: odpMR.RKey()})
	if got := string(odp[100:108]); got != "8 bytes!" {
		t.Errorf("RDMA write to offset 100 of an ODP page: %q there, %q at the page's start; want it at 100", got, odp[:8])
	}
	copy(odp[pg+200:], "cpu data")
	post(uverbs.SendWR{Opcode: uverbs.WRRDMARead, SGE: []uverbs.SGE{{Addr: plainMR.Addr() + 16, Length: 8, LKey: plainMR.LKey()}},
		RemoteAddr: odpMR.Addr() + uint64(pg) + 200, RKey: odpMR.RKey()})
	if got := string(plain[16:24]); got != "cpu data" {
		t.Errorf("RDMA read from offset 200 of an ODP page: %q, want %q", got, "cpu data")
	}
}

// odpPair is what both reproductions need on rxe0: an ODP region and a
// plain one of two pages each in one PD, and post, which runs one
// signaled request on an RC QP connected to another of the same device
// and waits for its success. It skips where rxe has no ODP.
type odpPair struct {
	odp, plain     []byte
	odpMR, plainMR *mr.MR
	post           func(wr uverbs.SendWR)
}

func newODPPair(t *testing.T) *odpPair {
	t.Helper()
	d := testenv.Only(t, "rxe", "the defect is rxe's ODP copy")
	ctx, err := uverbs.OpenName(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	attr, err := ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	if attr.ODPGeneralCaps&uverbs.ODPSupport == 0 {
		t.Skipf("no ODP on rxe before 6.14 (Linux %s)", testenv.KernelRelease())
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pd.Close() })
	q, err := cq.New(ctx, 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	const access = uverbs.LocalWrite | uverbs.RemoteWrite | uverbs.RemoteRead
	pg := os.Getpagesize()
	region := func(extra uverbs.Access) ([]byte, *mr.MR) {
		buf, err := mr.Alloc(2 * pg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mr.Free(buf) })
		m, err := mr.Register(pd, buf, access|extra)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return buf, m
	}
	odp, odpMR := region(uverbs.OnDemand)
	plain, plainMR := region(0)

	gid, err := ctx.GIDIndex(1, netip.MustParseAddr(d.Addr))
	if err != nil {
		t.Fatal(err)
	}
	gids, err := ctx.GIDTable(1)
	if err != nil {
		t.Fatal(err)
	}
	var dgid uverbs.GID
	for _, e := range gids {
		if e.Index == gid {
			dgid = e.GID
		}
	}
	qp := func() *uverbs.QP {
		qp, err := pd.CreateQP(uverbs.QPInit{Type: uverbs.RC, SendCQ: q, RecvCQ: q,
			Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { qp.Close() })
		if err := qp.Init(1, access); err != nil {
			t.Fatal(err)
		}
		return qp
	}
	a, b := qp(), qp()
	for _, p := range [][2]*uverbs.QP{{a, b}, {b, a}} {
		if err := p[0].ConnectRC(uverbs.RCPath{Port: 1, MTU: uverbs.MTU1024, Global: true, DGID: dgid,
			SGIDIndex: uint8(gid), HopLimit: 64, DestQPN: p[1].Num(), RdAtomic: 1}); err != nil {
			t.Fatal(err)
		}
	}
	post := func(wr uverbs.SendWR) {
		t.Helper()
		wr.Flags = uverbs.SendSignaled
		if _, err := a.PostSend([]uverbs.SendWR{wr}); err != nil {
			t.Fatal(err)
		}
		var wc [1]cq.WC
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if n, err := q.Poll(wc[:]); err != nil || n == 1 {
				if err != nil || wc[0].Status != cq.Success {
					t.Fatalf("%v: %v, %v", wr.Opcode, err, wc[0].Status)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: no completion", wr.Opcode)
			}
		}
	}

	return &odpPair{odp: odp, plain: plain, odpMR: odpMR, plainMR: plainMR, post: post}
}

// TestRXEODPZeroPage reads by RDMA a page of an ODP region that no one
// has touched, then writes 8 bytes into it by RDMA. A correct kernel
// faults the page in writable for the write (a new page; the read had
// mapped the shared zero page), so fresh anonymous memory elsewhere stays
// zero. rxe of Linux 6.18.15 writes into the zero page itself: the bytes
// then show in every page of memory that no one has written, in every
// process, and the Go runtime, which trusts fresh memory to be zero,
// crashes (the test binary, the next one, then the guest's init). The
// test writes the zero page's bytes back to zero before it fails.
// uverbs TestODP never has the device write a page it only read.
func TestRXEODPZeroPage(t *testing.T) {
	p := newODPPair(t)
	pg := os.Getpagesize()
	target := p.odpMR.Addr() + uint64(pg) // page 1, never touched
	p.post(uverbs.SendWR{Opcode: uverbs.WRRDMARead, SGE: []uverbs.SGE{{Addr: p.plainMR.Addr(), Length: 8, LKey: p.plainMR.LKey()}},
		RemoteAddr: target, RKey: p.odpMR.RKey()})
	copy(p.plain[pg:], "zeropage")
	write := func() {
		p.post(uverbs.SendWR{Opcode: uverbs.WRRDMAWrite, SGE: []uverbs.SGE{{Addr: p.plainMR.Addr() + uint64(pg), Length: 8, LKey: p.plainMR.LKey()}},
			RemoteAddr: target, RKey: p.odpMR.RKey()})
	}
	write()
	fresh, err := unix.Mmap(-1, 0, pg, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(fresh)
	if got := string(p.odp[pg : pg+8]); got != "zeropage" {
		t.Errorf("the ODP page holds %q, want %q", got, "zeropage")
	}
	got := string(fresh[:8])
	if got != string(make([]byte, 8)) {
		clear(p.plain[pg : pg+8])
		write() // the same path puts zeros back
		t.Errorf("after an RDMA read and then write of an untouched ODP page, a fresh anonymous page reads %q: the device wrote into the shared zero page (written back to zero)", got)
	}
}
