package mlx5

import (
	"errors"
	"fmt"
	"sync"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// libmlx5's defaults for the bfregs it asks GET_CONTEXT for, with none of
// its environment variables set (MLX5_TOTAL_UUARS, MLX5_NUM_LOW_LAT_UUARS).
const (
	defTotalUUARs    = 8 * nonFPBfregsUAR // MLX5_DEF_TOT_UUARS
	defLowLatUUARs   = 4
	medBfregsTshold  = 12                       // MLX5_MED_BFREGS_TSHOLD
	maxUARs          = 1 << 8                   // MLX5_MAX_UARS
	maxBfregs        = maxUARs * nonFPBfregsUAR // MLX5_MAX_BFREGS
	cqeVersionV1     = 1
	eceCreateTrigger = 0x10000000 // the ECE options CREATE_QP asks for when the kernel has ECE
)

// context is one device context: what GET_CONTEXT's response said, the
// UARs the provider maps, the tables CQ polling finds QPs and SRQs in, and
// the doorbell record pages. It is libmlx5's struct mlx5_context, less
// what is not implemented (see docs/mlx5.md).
type context struct {
	dev      provider.Device
	pageSize int

	// The bfregs libmlx5 asks for (get_total_uuars, get_num_low_lat_uuars).
	totUUARs    int
	lowLatUUARs int

	// From GET_CONTEXT's response.
	bfRegSize      int
	cacheLineSize  int
	maxSQDescSz    int
	maxRQDescSz    int
	maxSendWQEBB   int
	maxRecvWR      int
	maxSRQRecvWR   int
	numPorts       int
	cqeVersion     int
	ece            bool   // MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE
	dumpFillMkey   uint32 // the lkey whose scatter entries take no data
	numUARsPerPage int
	cmdsSuppUHW    uint8

	// staticUARs is set when the kernel allocated the UARs at GET_CONTEXT
	// (TotBfregs != 0: libmlx5's MLX5_CTX_FLAGS_NO_KERN_DYN_UAR); uars are
	// their pages and bfs their bfregs, which CREATE_QP's response picks
	// from. Otherwise UARs are allocated as QPs need them (uar.go).
	staticUARs bool
	uars       [][]byte
	bfs        []bfreg

	// The dynamically allocated UARs, as libmlx5 keeps them (uar.go).
	bfMu             sync.Mutex
	dynBF            []*bfreg // dedicated to thread domains (not used)
	dynShared        []*bfreg
	dynDedicated     []*bfreg
	qpMaxDedicated   int
	qpAllocDedicated int
	qpMaxShared      int
	qpAllocShared    int
	ncUAR            *bfreg // the non-cached UAR CQs are armed through

	// cqUAR is the UAR page whose CQ doorbell Arm writes: the first static
	// page, or the non-cached dynamic one. nil if there is none.
	cqUAR []byte

	// Where CQ polling finds the QP or SRQ of a CQE: by user index
	// (CQE version 1), by QP number and by SRQ number (version 0).
	tabMu sync.Mutex
	uidx  *table[qp]
	qps   *table[qp]
	srqs  *table[srq]

	dbr dbrecs

	// While the context closes (provider.Teardown: from Closing to
	// Closed) the kernel objects live on until the command file closes,
	// so the memory their Close would free waits in deferred.
	teardownMu sync.Mutex
	tearing    bool
	deferred   []func()

	closed bool
}

func newContext(dev provider.Device, pageSize int) (*context, error) {
	tot, err := totalUUARs(pageSize)
	if err != nil {
		return nil, err
	}
	low := max(defLowLatUUARs, tot-medBfregsTshold)
	if low > tot-1 {
		return nil, fmt.Errorf("mlx5: %d low-latency bfregs of %d: %w", low, tot, provider.ErrInvalid)
	}
	c := &context{
		dev:         dev,
		pageSize:    pageSize,
		totUUARs:    tot,
		lowLatUUARs: low,
		uidx:        new(table[qp]),
		qps:         new(table[qp]),
		srqs:        new(table[srq]),
	}
	c.dbr.ctx = c
	return c, nil
}

// totalUUARs is get_total_uuars: at least two bfregs per 4 KiB UAR of a
// system page, at least the default, even.
func totalUUARs(pageSize int) (int, error) {
	size := defTotalUUARs
	perPage := pageSize / adapterPage * nonFPBfregsUAR
	size = max(perPage, size)
	size = (size + nonFPBfregsUAR - 1) &^ (nonFPBfregsUAR - 1)
	if size > maxBfregs {
		return 0, fmt.Errorf("mlx5: %d bfregs for %d-byte pages: %w", size, pageSize, provider.ErrInvalid)
	}
	return size, nil
}

// Udata returns the sizes of mlx5's driver data. The extended CREATE_CQ and
// CREATE_QP have the numbers and the driver data of the legacy ones.
// ALLOC_PD needs room for its response: mlx5 writes the PD number there
// whether or not the library reads it.
func (c *context) Udata(cmd uint32) (in, out int) {
	switch cmd {
	case abi.IB_USER_VERBS_CMD_GET_CONTEXT:
		return allocUcontextReqSize, allocUcontextRespSize
	case abi.IB_USER_VERBS_CMD_ALLOC_PD:
		return 0, allocPDRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_CQ:
		return createCQSize, createCQRespSize
	case abi.IB_USER_VERBS_CMD_RESIZE_CQ:
		return resizeCQSize, 0
	case abi.IB_USER_VERBS_CMD_CREATE_SRQ:
		return createSRQSize, createSRQRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_QP:
		return createQPSize, createQPRespSize
	case abi.IB_USER_VERBS_CMD_CREATE_AH:
		return 0, createAHRespSize
	}
	return 0, 0
}

// Start fills GET_CONTEXT's driver data as libmlx5's final request does:
// the bfregs it wants, CQE version 1, 4 KiB and dynamic UARs, and not
// MLX5_IB_ALLOC_UCTX_DEVX, which libmlx5 tries first and drops when the
// kernel refuses it (no DEVX here).
func (c *context) Start(req []byte) {
	encode(req, &abi.MLX5AllocUcontextReqV2{
		TotalNumBfregs:      uint32(c.totUUARs),
		NumLowLatencyBfregs: uint32(c.lowLatUUARs),
		MaxCQEVersion:       cqeVersionV1,
		LibCaps:             abi.MLX5_LIB_CAP_4K_UAR | abi.MLX5_LIB_CAP_DYN_UAR,
	}, "GET_CONTEXT")
}

// Opened reads GET_CONTEXT's response and maps the UARs, as
// mlx5_set_context: the static pages when the kernel allocated bfregs,
// else the non-cached UAR CQs are armed through.
func (c *context) Opened(resp []byte) error {
	var r abi.MLX5AllocUcontextResp
	decode(resp, &r)
	c.bfRegSize = int(r.BfRegSize)
	c.cacheLineSize = int(r.CacheLineSize)
	c.maxSQDescSz = int(r.MaxSQDescSz)
	c.maxRQDescSz = int(r.MaxRQDescSz)
	c.maxSendWQEBB = int(r.MaxSendWQEBB)
	c.numPorts = int(r.NumPorts)
	c.maxRecvWR = int(r.MaxRecvWr)
	c.maxSRQRecvWR = int(r.MaxSRQRecvWr)
	c.ece = r.CompMask&abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE != 0
	c.dumpFillMkey = invalidLKey // the kernel never reports this one
	if r.CompMask&abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY != 0 {
		c.dumpFillMkey = r.DumpFillMkey
	}
	c.cqeVersion = int(r.CQEVersion)
	c.numUARsPerPage = 1
	if r.LogUARSize != 0 || r.NumUARsPerPage != 0 {
		c.numUARsPerPage = int(r.NumUARsPerPage)
	}
	c.cmdsSuppUHW = r.CmdsSuppUHW

	// What libmlx5 would divide by zero or index out of its arrays with.
	switch {
	case c.cacheLineSize < 8 || c.cacheLineSize > c.pageSize || c.pageSize%c.cacheLineSize != 0:
		return c.badResp("cache line size %d", c.cacheLineSize)
	case c.numUARsPerPage < 1 || c.numUARsPerPage*adapterPage > c.pageSize:
		return c.badResp("%d UARs per page", c.numUARsPerPage)
	case c.bfRegSize < 0 || bfOffset+bfregsPerUAR*c.bfRegSize > adapterPage || c.bfRegSize%(2*sendWQEBB) != 0:
		return c.badResp("BlueFlame register size %d", c.bfRegSize)
	case c.maxSQDescSz == 0:
		return c.badResp("send descriptor size 0")
	case c.cqeVersion > cqeVersionV1:
		return c.badResp("CQE version %d", c.cqeVersion)
	}

	if r.TotBfregs != 0 {
		if err := c.mapStaticUARs(int(r.TotBfregs)); err != nil {
			return err
		}
	} else {
		c.qpMaxDedicated = c.lowLatUUARs
		c.qpMaxShared = c.totUUARs - c.lowLatUUARs
	}
	c.setNCUAR()
	switch {
	case c.ncUAR != nil:
		c.cqUAR = c.ncUAR.page
	case len(c.uars) > 0:
		c.cqUAR = c.uars[0]
	}
	return nil
}

func (c *context) badResp(format string, args ...any) error {
	return fmt.Errorf("mlx5: GET_CONTEXT response: %s: %w", fmt.Sprintf(format, args...), provider.ErrInvalid)
}

// mapStaticUARs maps the pages of the bfregs the kernel allocated and lays
// out their bfregs, four per UAR of which the kernel hands out the first
// two, as mlx5_set_context does.
func (c *context) mapStaticUARs(tot int) error {
	c.staticUARs = true
	c.totUUARs = tot
	pages := tot / (c.numUARsPerPage * nonFPBfregsUAR)
	if pages > maxUARs {
		return c.badResp("%d static bfregs", tot)
	}
	c.bfs = make([]bfreg, tot/nonFPBfregsUAR*bfregsPerUAR)
	for i := 0; i < pages; i++ {
		b, err := c.dev.Mmap(uarMmapOffset(i, c.pageSize, abi.MLX5_IB_MMAP_REGULAR_PAGE), c.pageSize)
		if err == nil && len(b) < c.pageSize {
			c.dev.Munmap(b)
			err = fmt.Errorf("%d bytes: %w", len(b), provider.ErrInvalid)
		}
		if err != nil {
			c.unmapStatic()
			return fmt.Errorf("mlx5: map UAR page %d: %w", i, err)
		}
		c.uars = append(c.uars, b)
	}
	for i := 0; i < pages; i++ {
		for j := 0; j < c.numUARsPerPage; j++ {
			for k := 0; k < bfregsPerUAR; k++ {
				bfi := (i*c.numUARsPerPage+j)*bfregsPerUAR + k
				bf := &c.bfs[bfi]
				bf.needLock = c.needUUARLock(bfi)
				if bfi != 0 {
					bf.bufSize = c.bfRegSize / 2
				}
				bf.uuarn = bfi
				bf.setReg(c.uars[i], adapterPage*j+bfOffset+k*c.bfRegSize)
			}
		}
	}
	return nil
}

// needUUARLock is need_uuar_lock: bfreg 0 never does BlueFlame, and the
// low-latency bfregs, at the top, belong to one QP each; the rest are
// shared between QPs and take a lock.
func (c *context) needUUARLock(uuarn int) bool {
	if uuarn == 0 {
		return false
	}
	i := uuarn/2 + uuarn%2
	return i < c.totUUARs-c.lowLatUUARs
}

// uarMmapOffset is get_uar_mmap_offset: the command in bits 8-15 of the
// page index, the index below (and above bit 16 for large ALLOC_WC ones).
func uarMmapOffset(idx, pageSize int, cmd uint64) uint64 {
	off := cmd << 8
	if cmd == abi.MLX5_IB_MMAP_ALLOC_WC && idx >= 1<<8 {
		off |= uint64(idx&0xff) | uint64(idx>>8)<<16
	} else {
		off |= uint64(idx)
	}
	return off * uint64(pageSize)
}

func (c *context) unmapStatic() {
	for _, b := range c.uars {
		c.dev.Munmap(b)
	}
	c.uars = nil
}

// Close unmaps the UARs. uverbs calls it after every object of the context
// is gone.
func (c *context) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.unmapStatic()
	return c.freeDynUARs()
}

// Closing starts the context's teardown (provider.Teardown): from now on
// the memory of a closed queue is freed only in Closed, and Close leaves
// the UAR objects to the file's close.
func (c *context) Closing() {
	c.teardownMu.Lock()
	c.tearing = true
	c.teardownMu.Unlock()
}

// Closed frees what was kept since Closing: the command file is closed
// and the kernel has destroyed the objects the memory belonged to.
func (c *context) Closed() {
	c.teardownMu.Lock()
	c.tearing = false
	deferred := c.deferred
	c.deferred = nil
	c.teardownMu.Unlock()
	for _, f := range deferred {
		f()
	}
}

func (c *context) tearingDown() bool {
	c.teardownMu.Lock()
	defer c.teardownMu.Unlock()
	return c.tearing
}

// freeMem returns a queue's doorbell record and then frees its buffer,
// in mlx5_destroy_cq's (and _qp's, _srq's) order; while the context
// closes, once the file is closed.
func (c *context) freeMem(db dbrec, buf []byte) {
	c.teardownMu.Lock()
	if c.tearing {
		c.deferred = append(c.deferred, func() { c.freeMem(db, buf) })
		c.teardownMu.Unlock()
		return
	}
	c.teardownMu.Unlock()
	c.dbr.free(db)
	mem.Free(buf)
}

// The optional hooks of package provider that uverbs, cq and
// internal/verbs look for.
var (
	_ provider.Teardown     = (*context)(nil)
	_ provider.EventCounter = (*cq)(nil)
	_ provider.StateTracker = (*sendQueue)(nil)
)

var errNotMine = errors.New("mlx5: an object of another driver")
