package mlx5_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/provider"
)

// The fake kernel's and device's fixed answers, the same as the C
// harness's (test/conformance/mlx5.c, which says why each is what it is).
const (
	pageSize = 4096

	ctxQPTabSize    = 1 << 18
	ctxBFRegSize    = 512
	ctxTotBFRegs    = 16
	ctxCacheLine    = 64
	ctxMaxSQDesc    = 1024
	ctxMaxRQDesc    = 512
	ctxMaxSendWQEBB = 1 << 15
	ctxMaxRecvWR    = 1 << 15
	ctxMaxSRQRecvWR = 1<<15 - 1
	ctxCQEVersion   = 1
	ctxCmdsSuppUHW  = 3 // QUERY_DEVICE | CREATE_AH
	ctxLogUARSize   = 12
	ctxUARsPerPage  = 1
	ctxRespLength   = 72 // sizeof(struct mlx5_ib_alloc_ucontext_resp)
	allocUctxDEVX   = 1  // MLX5_IB_ALLOC_UCTX_DEVX in the request's flags
	confCQN         = 0x3c
	confSRQN        = 0x21
	confQPN         = 0xabc
	confQPBFReg     = 5
	invalidBFReg    = 1 << 31 // MLX5_IB_INVALID_BFREG: CREATE_QP's answer with dynamic UARs
	dynMmapCmd      = 9       // MLX5_IB_MMAP_OFFSET_START: the mmap command of the UAR objects' entries
	dynPageID       = 0x40    // the first dynamic UAR's page id (the firmware's UAR index)
	dynHandle       = 0x10    // the first UAR object's handle
	confCQHandle    = 2
	confSRQHandle   = 3
	confQPHandle    = 7
	cqeSize         = 64 // the CQEs libmlx5 asks for without MLX5_CQE_SIZE
	sendWQEBB       = 64 // MLX5_SEND_WQE_BB
)

// contextResp is the driver response to GET_CONTEXT (struct
// mlx5_ib_alloc_ucontext_resp), cut or padded to n bytes. dyn: the
// kernel's answer to MLX5_LIB_CAP_DYN_UAR, no static UARs (tot_bfregs
// and num_dyn_bfregs 0).
func contextResp(n int, dyn bool) []byte {
	b := make([]byte, max(n, ctxRespLength))
	le := binary.LittleEndian
	le.PutUint32(b[0:], ctxQPTabSize)
	le.PutUint32(b[4:], ctxBFRegSize)
	if !dyn {
		le.PutUint32(b[8:], ctxTotBFRegs)
	}
	le.PutUint32(b[12:], ctxCacheLine)
	le.PutUint16(b[16:], ctxMaxSQDesc)
	le.PutUint16(b[18:], ctxMaxRQDesc)
	le.PutUint32(b[20:], ctxMaxSendWQEBB)
	le.PutUint32(b[24:], ctxMaxRecvWR)
	le.PutUint32(b[28:], ctxMaxSRQRecvWR)
	le.PutUint16(b[32:], 1) // num_ports
	le.PutUint32(b[40:], ctxRespLength)
	b[44] = ctxCQEVersion
	b[45] = ctxCmdsSuppUHW
	le.PutUint32(b[56:], ctxLogUARSize)
	le.PutUint32(b[60:], ctxUARsPerPage)
	return b[:n]
}

// objResp is a driver response whose first word is v (the CQ's and SRQ's
// number, the QP's bfreg index), n bytes long.
func objResp(n int, v uint32) []byte {
	b := make([]byte, max(n, 4))
	binary.LittleEndian.PutUint32(b, v)
	return b[:n]
}

// uarPage is one page the provider mapped.
type uarPage struct {
	off uint64
	b   []byte
}

// fakeDevice is the Go side's provider.Device: Mmap of the command file
// hands out fresh page-aligned anonymous pages in place of the device's
// UAR pages, as the C harness's mmap does. Doorbell, the kernel's POST_SEND
// doorbell, is counted: mlx5 never rings it. It is a provider.UARDevice
// too, answering the UAR object's methods as the harness's uar_ioctl
// does (in the static setups the driver must not call them: an
// allocation shows as a uaralloc record the harness does not have).
type fakeDevice struct {
	mu        sync.Mutex // guards pages (Munmap may run in a CQ's cleanup)
	pages     []uarPage  // in mapping order
	doorbells int
	nuar      uint32   // UAR objects allocated
	records   []string // uaralloc records not yet in the transcript
}

// AllocUAR answers MLX5_IB_METHOD_UAR_OBJ_ALLOC as the harness does: the
// n-th object's page is at the mmap offset of the n-th entry of the
// driver's range (mlx5_entry_to_mmap_offset) and has page id
// dynPageID+n.
func (d *fakeDevice) AllocUAR(allocType uint32) (provider.UAR, error) {
	n := d.nuar
	off := (uint64(n>>8)<<16 | dynMmapCmd<<8 | uint64(n&0xff)) * pageSize
	u := provider.UAR{Handle: dynHandle + n, MmapOffset: off, Length: pageSize, PageID: dynPageID + n}
	d.records = append(d.records, fmt.Sprintf("uaralloc %d -> 0x%x %d %d", allocType, off, u.Length, u.PageID))
	d.nuar++
	return u, nil
}

// FreeUAR answers MLX5_IB_METHOD_UAR_OBJ_DESTROY.
func (d *fakeDevice) FreeUAR(handle uint32) error {
	d.records = append(d.records, fmt.Sprintf("uarfree 0x%x", handle))
	return nil
}

// flush returns the records of the UAR methods called since the last
// flush.
func (d *fakeDevice) flush() []string {
	r := d.records
	d.records = nil
	return r
}

func (d *fakeDevice) Mmap(offset uint64, size int) ([]byte, error) {
	if size != pageSize {
		return nil, fmt.Errorf("fake: mmap of %d bytes at %#x: the device pages are one page each", size, offset)
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.pages = append(d.pages, uarPage{off: offset, b: b})
	d.mu.Unlock()
	return b, nil
}

// Munmap may run beside a test's other goroutines (a context closed
// while they arm): the pages are locked.
func (d *fakeDevice) Munmap(b []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, p := range d.pages {
		if len(b) > 0 && len(p.b) > 0 && &b[0] == &p.b[0] {
			d.pages = slices.Delete(d.pages, i, i+1)
			return unix.Munmap(p.b)
		}
	}
	return errors.New("fake: munmap of memory not mapped here")
}

func (d *fakeDevice) Doorbell(uint32) error { d.doorbells++; return nil }

// close unmaps what the provider left mapped.
func (d *fakeDevice) close(t testing.TB) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.pages {
		if err := unix.Munmap(p.b); err != nil {
			t.Error(err)
		}
	}
	d.pages = nil
}

// sorted returns the pages in order of mmap offset, as the transcript
// lists them.
func (d *fakeDevice) sorted() []uarPage {
	p := slices.Clone(d.pages)
	slices.SortStableFunc(p, func(a, b uarPage) int {
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return 0
	})
	return p
}

func pow2(v uint32) uint32 {
	p := uint32(1)
	for p < v {
		p <<= 1
	}
	return p
}

// pageOffsets returns a copy of a driver request with the 8-byte address
// fields at offs replaced by their offsets within their page.
func pageOffsets(req []byte, offs ...int) []byte {
	c := slices.Clone(req)
	for _, o := range offs {
		if o+8 <= len(c) {
			binary.LittleEndian.PutUint64(c[o:], binary.LittleEndian.Uint64(c[o:])&(pageSize-1))
		}
	}
	return c
}
