package mlx5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

func TestDriverDataSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  int
		v    any
		size uintptr
	}{
		{"alloc_ucontext_req_v2", allocUcontextReqSize, abi.MLX5AllocUcontextReqV2{}, unsafe.Sizeof(abi.MLX5AllocUcontextReqV2{})},
		{"alloc_ucontext_resp", allocUcontextRespSize, abi.MLX5AllocUcontextResp{}, unsafe.Sizeof(abi.MLX5AllocUcontextResp{})},
		{"alloc_pd_resp", allocPDRespSize, abi.MLX5AllocPDResp{}, unsafe.Sizeof(abi.MLX5AllocPDResp{})},
		{"create_cq", createCQSize, abi.MLX5CreateCQ{}, unsafe.Sizeof(abi.MLX5CreateCQ{})},
		{"create_cq_resp", createCQRespSize, abi.MLX5CreateCQResp{}, unsafe.Sizeof(abi.MLX5CreateCQResp{})},
		{"resize_cq", resizeCQSize, abi.MLX5ResizeCQ{}, unsafe.Sizeof(abi.MLX5ResizeCQ{})},
		{"create_srq", createSRQSize, abi.MLX5CreateSRQ{}, unsafe.Sizeof(abi.MLX5CreateSRQ{})},
		{"create_srq_resp", createSRQRespSize, abi.MLX5CreateSRQResp{}, unsafe.Sizeof(abi.MLX5CreateSRQResp{})},
		{"create_qp", createQPSize, abi.MLX5CreateQP{}, unsafe.Sizeof(abi.MLX5CreateQP{})},
		{"create_qp_resp", createQPRespSize, abi.MLX5CreateQPResp{}, unsafe.Sizeof(abi.MLX5CreateQPResp{})},
		{"create_ah_resp", createAHRespSize, abi.MLX5CreateAHResp{}, unsafe.Sizeof(abi.MLX5CreateAHResp{})},
	} {
		// binary.Encode packs fields without padding: it must agree
		// with the C layout, which the abi tests check.
		if tc.got != int(tc.size) || binary.Size(tc.v) != int(tc.size) {
			t.Errorf("%s: constant %d, binary.Size %d, C %d", tc.name, tc.got, binary.Size(tc.v), tc.size)
		}
	}
	c, err := newContext(newFakeDev(t), 4096)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd     uint32
		in, out int
	}{
		{abi.IB_USER_VERBS_CMD_GET_CONTEXT, 32, 72},
		{abi.IB_USER_VERBS_CMD_ALLOC_PD, 0, 4},
		{abi.IB_USER_VERBS_EX_CMD_CREATE_CQ, 32, 8},
		{abi.IB_USER_VERBS_CMD_RESIZE_CQ, 16, 0},
		{abi.IB_USER_VERBS_CMD_CREATE_SRQ, 32, 8},
		{abi.IB_USER_VERBS_EX_CMD_CREATE_QP, 56, 40},
		{abi.IB_USER_VERBS_CMD_CREATE_AH, 0, 16},
		{abi.IB_USER_VERBS_CMD_REG_MR, 0, 0},
	} {
		if in, out := c.Udata(tc.cmd); in != tc.in || out != tc.out {
			t.Errorf("Udata(%d) = %d, %d; want %d, %d", tc.cmd, in, out, tc.in, tc.out)
		}
	}
}

// TestStart: GET_CONTEXT's driver data is libmlx5's last try: the bfregs
// of get_total_uuars and get_num_low_lat_uuars, no DEVX, CQE version 1,
// 4K and dynamic UARs.
func TestStart(t *testing.T) {
	for _, tc := range []struct {
		pageSize int
		want     string
	}{
		{4096, "10 00 00 00 04 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00"},
		// 64 KiB pages hold 16 UARs: 32 bfregs, 20 of them low-latency.
		{65536, "20 00 00 00 14 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00"},
	} {
		c, err := newContext(newFakeDev(t), tc.pageSize)
		if err != nil {
			t.Fatal(err)
		}
		req := make([]byte, allocUcontextReqSize)
		c.Start(req)
		if want := hexBytes(tc.want); !bytes.Equal(req, want) {
			t.Errorf("page size %d: request\n% x\nwant\n% x", tc.pageSize, req, want)
		}
	}
}

func TestUARMmapOffset(t *testing.T) {
	for _, tc := range []struct {
		idx  int
		cmd  uint64
		want uint64
	}{
		{0, abi.MLX5_IB_MMAP_REGULAR_PAGE, 0},
		{7, abi.MLX5_IB_MMAP_REGULAR_PAGE, 7 * 4096},
		{1, abi.MLX5_IB_MMAP_NC_PAGE, 0x301 * 4096},
		{0x123, abi.MLX5_IB_MMAP_ALLOC_WC, 0x10623 * 4096},
	} {
		if got := uarMmapOffset(tc.idx, 4096, tc.cmd); got != tc.want {
			t.Errorf("uarMmapOffset(%#x, cmd %d) = %#x, want %#x", tc.idx, tc.cmd, got, tc.want)
		}
	}
}

// TestOpenedStatic: the kernel's 16 bfregs are 8 UAR pages, mapped at
// their regular-page offsets, with four bfregs each; bfreg 0 has no
// BlueFlame, the top ones (the low-latency four) no lock, and CQs are
// armed through the first page.
func TestOpenedStatic(t *testing.T) {
	dev := newFakeDev(t)
	c := openCtx(t, dev, ucontextResp(true))
	if len(c.uars) != 8 || dev.mapped != 8 {
		t.Fatalf("%d UAR pages, %d mappings; want 8", len(c.uars), dev.mapped)
	}
	for i := 0; i < 8; i++ {
		if m, ok := dev.maps[uint64(i)*4096]; !ok || &m[0] != &c.uars[i][0] {
			t.Errorf("UAR page %d not mapped at offset %#x", i, i*4096)
		}
	}
	if len(c.bfs) != 32 {
		t.Fatalf("%d bfregs, want 32", len(c.bfs))
	}
	for i := range c.bfs {
		bf := &c.bfs[i]
		wantReg := 0x800 + (i%4)*512
		wantSize := 256
		if i == 0 {
			wantSize = 0
		}
		wantLock := i != 0 && i/2+i%2 < 12
		if &bf.page[0] != &c.uars[i/4][0] || bf.reg != wantReg || bf.bufSize != wantSize || bf.needLock != wantLock || bf.uuarn != i {
			t.Errorf("bfreg %d: reg %#x size %d lock %v uuarn %d; want page %d, %#x, %d, %v", i, bf.reg, bf.bufSize, bf.needLock, bf.uuarn, i/4, wantReg, wantSize, wantLock)
		}
	}
	if c.ncUAR != nil || &c.cqUAR[0] != &c.uars[0][0] {
		t.Error("CQs are not armed through the first static page")
	}
	c.Close()
	if dev.mapped != 0 {
		t.Errorf("%d mappings left after Close", dev.mapped)
	}
}

// TestOpenedDynamic: without static bfregs the context allocates the
// non-cached UAR for arming CQs, and nothing else, until QPs come.
func TestOpenedDynamic(t *testing.T) {
	dev := &fakeUARDev{fakeDev: newFakeDev(t)}
	c := openCtx(t, dev, ucontextResp(false))
	if len(c.uars) != 0 || len(c.bfs) != 0 {
		t.Errorf("%d static pages and %d bfregs", len(c.uars), len(c.bfs))
	}
	if c.ncUAR == nil || len(dev.types) != 1 || dev.types[0] != abi.MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC {
		t.Fatalf("allocated UARs of types %v, want one NC", dev.types)
	}
	if c.ncUAR.pageID != 100 || &c.cqUAR[0] != &dev.maps[0x10000][0] || c.ncUAR.reg != 0x800 {
		t.Errorf("NC UAR: page %d reg %#x", c.ncUAR.pageID, c.ncUAR.reg)
	}
	if c.qpMaxDedicated != 4 || c.qpMaxShared != 12 {
		t.Errorf("QP bfregs: %d dedicated, %d shared; want 4, 12", c.qpMaxDedicated, c.qpMaxShared)
	}
	c.Close()
	if dev.mapped != 0 || len(dev.freed) != 1 {
		t.Errorf("after Close: %d mappings, UARs %v freed", dev.mapped, dev.freed)
	}

	// A device without the UAR ioctl: no UAR at all, so CQs are armed by
	// the kernel and QPs cannot be created.
	plain := newFakeDev(t)
	c = openCtx(t, plain, ucontextResp(false))
	if c.cqUAR != nil || plain.mapped != 0 {
		t.Errorf("context without UARs: CQ UAR %v, %d mappings", c.cqUAR != nil, plain.mapped)
	}
	q := newCQ(t, c, 4, 1)
	if q.Arm(false) {
		t.Error("Arm without a UAR reported an armed CQ")
	}
	init := provider.QPInit{Type: abi.IB_UVERBS_QPT_RC, MaxSendWR: 1, MaxSendSGE: 1, SendCQ: q, RecvCQ: q}
	if _, err := c.CreateQP(&init, make([]byte, createQPSize)); !errors.Is(err, provider.ErrUnsupported) {
		t.Errorf("CreateQP without UARs: %v", err)
	}
}

func TestOpenedRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*abi.MLX5AllocUcontextResp)
	}{
		{"cache line 0", func(r *abi.MLX5AllocUcontextResp) { r.CacheLineSize = 0 }},
		{"CQE version 2", func(r *abi.MLX5AllocUcontextResp) { r.CQEVersion = 2 }},
		{"2 UARs in a 4K page", func(r *abi.MLX5AllocUcontextResp) { r.NumUARsPerPage = 2 }},
		{"BlueFlame registers past the UAR", func(r *abi.MLX5AllocUcontextResp) { r.BfRegSize = 1024 }},
		{"no send descriptor", func(r *abi.MLX5AllocUcontextResp) { r.MaxSQDescSz = 0 }},
	} {
		dev := newFakeDev(t)
		c, err := newContext(dev, 4096)
		if err != nil {
			t.Fatal(err)
		}
		r := ucontextResp(true)
		tc.mod(&r)
		if err := c.Opened(encodeResp(t, &r)); !errors.Is(err, provider.ErrInvalid) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if dev.mapped != 0 {
			t.Errorf("%s: %d mappings left", tc.name, dev.mapped)
		}
	}
	dev := newFakeDev(t)
	dev.fail = true
	c, _ := newContext(dev, 4096)
	r := ucontextResp(true)
	if err := c.Opened(encodeResp(t, &r)); err == nil {
		t.Error("Opened with a failing Mmap succeeded")
	}
}

// TestDbrecPlacement: doorbell records come in cache-line slots of a page,
// lowest free first, as libmlx5 hands them out; a page whose slots are all
// freed is unmapped and the next record starts a new page.
func TestDbrecPlacement(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	off := func(r dbrec) uint64 { return r.addr() - mem.Addr(r.page.buf) }
	var rs []dbrec
	for i := 0; i < 4; i++ {
		r, err := c.dbr.alloc()
		if err != nil {
			t.Fatal(err)
		}
		if got := off(r); got != uint64(i*64) {
			t.Errorf("record %d at %d, want %d", i, got, i*64)
		}
		rs = append(rs, r)
	}
	c.dbr.free(rs[1])
	r, _ := c.dbr.alloc()
	if off(r) != 64 || r.page != rs[0].page {
		t.Errorf("after freeing slot 1, the next record is at %d", off(r))
	}
	// Fill the page: the 65th record opens a second page, whose slots
	// come first from then on.
	for i := 4; i < 64; i++ {
		rs = append(rs, must(c.dbr.alloc()))
	}
	p2 := must(c.dbr.alloc())
	if p2.page == rs[0].page || off(p2) != 0 {
		t.Errorf("record 65 at %d of the first page", off(p2))
	}
	c.dbr.free(rs[10])
	if r := must(c.dbr.alloc()); r.page != rs[0].page || off(r) != 640 {
		t.Errorf("a slot freed in the full page is not the next: got %d", off(r))
	}
	c.dbr.free(p2)
	if len(c.dbr.avail) != 0 {
		t.Errorf("%d pages with free slots, want none", len(c.dbr.avail))
	}
}

func must(r dbrec, err error) dbrec {
	if err != nil {
		panic(err)
	}
	return r
}

// TestUIdx: user indices as get_free_uidx hands them out: the lowest free
// entry, a freed one reused.
func TestUIdx(t *testing.T) {
	var tab table[qp]
	for i := 0; i < 3; i++ {
		n := tab.freeIndex()
		if n != i {
			t.Errorf("index %d: got %d", i, n)
		}
		tab.store(uint32(n), &qp{})
	}
	tab.clear(1)
	if n := tab.freeIndex(); n != 1 {
		t.Errorf("after clearing 1: %d", n)
	}
	if tab.find(1) != nil || tab.find(2) == nil || tab.find(5000) != nil {
		t.Error("find")
	}
	tab.clear(0)
	tab.clear(2)
	if tab.page[0].slots.Load() != nil {
		t.Error("an empty page is kept")
	}
}

// TestTeardown: between Closing and Closed a closed CQ keeps its doorbell
// record and ring (the kernel's CQ lives until the file closes), and Close
// unmaps the UARs but leaves their objects to the file; Closed frees the
// memory. Outside a teardown a CQ's Close frees at once. A closed CQ does
// not arm.
func TestTeardown(t *testing.T) {
	dev := &fakeUARDev{fakeDev: newFakeDev(t)}
	c := openCtx(t, dev, ucontextResp(false))
	q := makeCQ(t, c, 4, 1)
	page := q.db.page
	if page == nil || page.useCnt != 1 {
		t.Fatalf("doorbell record page %v", page)
	}

	c.Closing()
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if q.Arm(false) {
		t.Error("Arm after Close armed")
	}
	if useCnt(c, page) != 1 || len(c.deferred) != 1 {
		t.Errorf("after the CQ's Close in a teardown: record page use %d, %d frees deferred; want 1, 1", useCnt(c, page), len(c.deferred))
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close in a teardown: %v", err)
	}
	if dev.live() != 0 || len(dev.freed) != 0 {
		t.Errorf("after Close in a teardown: %d mappings, UARs %v destroyed; want 0, none", dev.live(), dev.freed)
	}
	c.Closed()
	if useCnt(c, page) != 0 || len(c.deferred) != 0 || c.tearingDown() {
		t.Errorf("after Closed: record page use %d, %d frees deferred", useCnt(c, page), len(c.deferred))
	}

	// Not tearing down: freed at once.
	c2 := openCtx(t, &fakeUARDev{fakeDev: newFakeDev(t)}, ucontextResp(false))
	q2 := makeCQ(t, c2, 4, 1)
	page2 := q2.db.page
	q2.Close()
	if useCnt(c2, page2) != 0 || q2.buf != nil || len(c2.deferred) != 0 {
		t.Errorf("CQ Close outside a teardown: record page use %d, ring kept %v, %d deferred", useCnt(c2, page2), q2.buf != nil, len(c2.deferred))
	}
	c2.Close()
}

// useCnt reads a doorbell record page's use under the lock a CQ's cleanup
// takes.
func useCnt(c *context, p *dbPage) int {
	c.dbr.mu.Lock()
	defer c.dbr.mu.Unlock()
	return p.useCnt
}
