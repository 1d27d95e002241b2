package mlx5

import (
	"fmt"
	"unsafe"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/spin"
)

// A UAR (user access region) is a 4 KiB page of device registers mapped
// into the process. A send queue rings its doorbell by writing the first 8
// bytes of its last WQE to a doorbell register in one: a bfreg, one of the
// two BlueFlame registers at 0x800 and 0xa00 of a UAR (with 512-byte
// registers). A bfreg is also a BlueFlame buffer: a WQE of up to half the
// register written there whole (on write-combining memory) goes to the
// device with the doorbell, which then need not fetch it by DMA. The
// halves alternate so that one burst does not combine with the next. A CQ
// is armed through the CQ doorbell at 0x20 of a UAR.
//
// libmlx5 gets its UARs in one of two ways, and so does this provider:
//
//   - Static: the kernel allocates them at GET_CONTEXT (an old kernel, or a
//     library that does not ask for MLX5_LIB_CAP_DYN_UAR) and reports
//     TotBfregs; the library maps their pages and the kernel picks a
//     bfreg for each QP in CREATE_QP's response.
//   - Dynamic: the kernel reports TotBfregs 0 (Linux 6.1 and 6.12 do,
//     when asked for MLX5_LIB_CAP_DYN_UAR, which libmlx5 always asks
//     for) and the library allocates UAR pages with the driver's
//     MLX5_IB_OBJECT_UAR ioctl as QPs need them, gives the first four
//     bfregs to one QP each and shares the rest, and names the page in
//     CREATE_QP. CQs are armed through a non-cached UAR allocated at open.
//
// The dynamic way needs the device to run that ioctl: a provider.Device
// that implements provider.UARDevice. Without it a context on a kernel that hands
// out no static UARs can create CQs (which are then armed with
// REQ_NOTIFY_CQ) but no QPs, as libmlx5 cannot either.

// bfreg is a doorbell register and its BlueFlame buffer (libmlx5's struct
// mlx5_bf).
type bfreg struct {
	page     []byte    // the mapped UAR page the register is in
	reg      int       // the register's offset in page
	needLock bool      // shared between QPs: mu serializes the rings
	mu       spin.Lock // held for the few stores of one ring, as libmlx5's spin lock
	offset   int       // the half of the buffer the next ring writes: 0 or bufSize
	bufSize  int       // half the register; 0 where there is no BlueFlame
	uuarn    int       // the bfreg's index; 0 (or, dynamic, an NC page) has no BlueFlame
	// base is &page[reg], checked once here (setReg) rather than at
	// each ring: the register and both halves of its buffer are in the
	// page and 8-byte aligned. nil when they are not: no QP takes it.
	base unsafe.Pointer
	// bfMax is the largest WQE (16-byte units) a BlueFlame write takes:
	// half the register, 0 without BlueFlame.
	bfMax int

	// Dynamic UARs. The first bfreg of a page holds its mapping (mapped)
	// and object; the others share them.
	mapped    bool
	dynAlloc  bool
	handle    uint32
	pageID    uint32
	ncMode    bool
	dedicated bool
	shared    bool
	count     int // QPs on a shared bfreg
}

// uarDevice returns the device's UAR allocator, if it has one.
func (c *context) uarDevice() (provider.UARDevice, bool) {
	u, ok := c.dev.(provider.UARDevice)
	return u, ok
}

// allocDynUAR allocates and maps a UAR page (mlx5_alloc_dyn_uar). It
// returns nil where libmlx5's returns NULL: with static UARs (whose
// legacy dynamic pages serve thread domains only, not implemented), when
// the device cannot allocate, and when the kernel's answer does not work.
func (c *context) allocDynUAR(allocType uint32) *bfreg {
	u, ok := c.uarDevice()
	if c.staticUARs || !ok {
		return nil
	}
	uar, err := u.AllocUAR(allocType)
	if err != nil {
		return nil
	}
	bf := &bfreg{dynAlloc: true, handle: uar.Handle, pageID: uar.PageID}
	b, err := c.dev.Mmap(uar.MmapOffset, int(uar.Length))
	if err != nil {
		u.FreeUAR(uar.Handle)
		return nil
	}
	if len(b) < adapterPage*c.numUARsPerPage {
		// Too small for the registers the provider would write: libmlx5
		// would write past it.
		c.dev.Munmap(b)
		u.FreeUAR(uar.Handle)
		return nil
	}
	bf.page, bf.mapped = b, true
	bf.ncMode = allocType == abi.MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC
	return bf
}

// freeUAR unmaps and destroys the page bf holds, if it holds one
// (mlx5_free_uar).
func (c *context) freeUAR(bf *bfreg) error {
	if !bf.mapped {
		return nil
	}
	bf.mapped = false
	err := c.dev.Munmap(bf.page)
	// While the context closes, the file's close destroys the object.
	if bf.dynAlloc && !c.tearingDown() {
		if u, ok := c.uarDevice(); ok {
			if ferr := u.FreeUAR(bf.handle); err == nil {
				err = ferr
			}
		}
	}
	return err
}

// setNCUAR allocates the non-cached UAR of the context
// (mlx5_set_singleton_nc_uar); without one, CQs are armed through the
// first static page, or not at all.
func (c *context) setNCUAR() {
	bf := c.allocDynUAR(abi.MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC)
	if bf == nil {
		return
	}
	bf.reg = bfOffset
	c.ncUAR = bf
}

// insertDynUUARs lays out the bfregs of a new dynamic page and appends
// them to the list of their kind (mlx5_insert_dyn_uuars).
func (c *context) insertDynUUARs(first *bfreg) {
	n := c.numUARsPerPage * nonFPBfregsUAR
	for j := 0; j < n; j++ {
		bf := first
		if j != 0 {
			bf = &bfreg{}
		}
		uarInPage := j / nonFPBfregsUAR
		inUAR := j % nonFPBfregsUAR
		if !first.ncMode {
			bf.bufSize = c.bfRegSize / 2
			bf.uuarn = 1 // any non-zero: BlueFlame allowed
		}
		bf.setReg(first.page, uarInPage*adapterPage+bfOffset+inUAR*c.bfRegSize)
		bf.dynAlloc = first.dynAlloc
		bf.needLock = first.shared
		if j != 0 {
			bf.pageID = first.pageID + uint32(uarInPage)
			bf.handle = first.handle
			bf.ncMode = first.ncMode
		}
		switch {
		case first.dedicated:
			c.qpAllocDedicated++
			bf.dedicated = true
			c.dynDedicated = append(c.dynDedicated, bf)
		case first.shared:
			c.qpAllocShared++
			bf.shared = true
			c.dynShared = append(c.dynShared, bf)
		default:
			c.dynBF = append(c.dynBF, bf)
		}
	}
}

// allocQPUAR allocates a BlueFlame page for QPs (mlx5_alloc_qp_uar).
func (c *context) allocQPUAR(dedicated bool) bool {
	bf := c.allocDynUAR(abi.MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF)
	if bf == nil {
		return false
	}
	bf.dedicated = dedicated
	bf.shared = !dedicated
	c.insertDynUUARs(bf)
	return true
}

// qpUAR picks the bfreg of a new QP when the UARs are dynamic
// (mlx5_get_qp_uar): a free dedicated one, allocating dedicated pages
// until there are as many as the low-latency bfregs asked for, then
// shared pages up to the rest, then the shared bfreg with the fewest QPs.
// nil if none can be had.
func (c *context) qpUAR() *bfreg {
	if c.bfRegSize == 0 {
		return c.ncUAR
	}
	c.bfMu.Lock()
	defer c.bfMu.Unlock()
	for {
		if len(c.dynDedicated) > 0 {
			bf := c.dynDedicated[0]
			c.dynDedicated = c.dynDedicated[1:]
			return bf
		}
		if c.qpAllocDedicated < c.qpMaxDedicated {
			if !c.allocQPUAR(true) {
				return nil
			}
			continue
		}
		if c.qpAllocShared < c.qpMaxShared {
			if !c.allocQPUAR(false) {
				return nil
			}
		}
		var bf *bfreg
		for _, e := range c.dynShared {
			if bf == nil || e.count < bf.count {
				bf = e
			}
		}
		if bf != nil {
			bf.count++
			return bf
		}
		// libmlx5 would dereference NULL here: no dedicated bfreg, and
		// both quotas spent without a shared one (a zero quota).
		return nil
	}
}

// putQPUAR gives a destroyed QP's dynamic bfreg back (mlx5_put_qp_uar).
func (c *context) putQPUAR(bf *bfreg) {
	if bf == nil || (!bf.dedicated && !bf.shared) {
		return
	}
	c.bfMu.Lock()
	defer c.bfMu.Unlock()
	if bf.dedicated {
		c.dynDedicated = append(c.dynDedicated, bf)
	} else {
		bf.count--
	}
}

// freeDynUARs unmaps and destroys every dynamic page (clean_dyn_uars).
func (c *context) freeDynUARs() error {
	var err error
	for _, list := range [][]*bfreg{c.dynBF, c.dynDedicated, c.dynShared} {
		for _, bf := range list {
			if ferr := c.freeUAR(bf); err == nil {
				err = ferr
			}
		}
	}
	c.dynBF, c.dynDedicated, c.dynShared = nil, nil, nil
	if c.ncUAR != nil {
		if ferr := c.freeUAR(c.ncUAR); err == nil {
			err = ferr
		}
		c.ncUAR = nil
	}
	if err != nil {
		return fmt.Errorf("mlx5: free UARs: %w", err)
	}
	return nil
}

// bfregFor returns the bfreg a new QP rings: the static one CREATE_QP's
// response names, or the dynamic one picked before the command.
func (c *context) bfregFor(index uint32, dyn *bfreg) (*bfreg, error) {
	if dyn != nil {
		if dyn.base == nil {
			return nil, fmt.Errorf("mlx5: dynamic bfreg: register outside its UAR page: %w", provider.ErrInvalid)
		}
		return dyn, nil
	}
	if int(index) >= len(c.bfs) || c.bfs[index].page == nil {
		return nil, fmt.Errorf("mlx5: CREATE_QP response: bfreg %d of %d: %w", index, len(c.bfs), provider.ErrInvalid)
	}
	if c.bfs[index].base == nil {
		return nil, fmt.Errorf("mlx5: bfreg %d: register outside its UAR page: %w", index, provider.ErrInvalid)
	}
	return &c.bfs[index], nil
}

// setReg places the bfreg at page[reg:] and checks, once, what each ring
// would otherwise check: the doorbell word and both halves of the
// BlueFlame buffer are inside the page, and aligned for the 8-byte stores
// and 64-byte bursts. bufSize and uuarn are set before. A register that
// fails keeps base nil, and bfregFor refuses it.
func (bf *bfreg) setReg(page []byte, reg int) {
	bf.page, bf.reg, bf.base = page, reg, nil
	bf.bfMax = 0
	if bf.uuarn != 0 {
		bf.bfMax = bf.bufSize / segSize
	}
	if reg < 0 || reg%8 != 0 || bf.bufSize%sendWQEBB != 0 || reg+max(8, 2*bf.bufSize) > len(page) {
		return
	}
	bf.base = unsafe.Pointer(&page[reg])
}
