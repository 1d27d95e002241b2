package conformance

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
)

// The mlx5 rows of the host cost table. The C side is the mlx5 harness's
// bench and count commands (test/conformance/mlx5.c, "host cost"); the Go
// side builds the mlx5 driver's CQ and QP through one provider.Context
// with the answers that harness's fake kernel gives (the package
// importing this registers the driver). What the fake device does
// happens with the clock stopped, and outside the counted loops, on both
// sides: Restart every MLX5BenchChunk posts (nothing else hands WQEs back
// to an mlx5 queue but a completion), and a Fill of the whole CQ when it
// holds fewer completions than a poll asks for.

// MLX5BenchSetup is the mlx5 QP both sides time: the sizes of BenchSetup.
var MLX5BenchSetup = Setup{Provider: "mlx5", SQ: 1024, RQ: 1024, CQ: 1024, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInline: 64}

// MLX5BenchChunk is how many requests are posted between two Restarts.
const MLX5BenchChunk = 1024

// The harness's fixed answers (test/conformance/mlx5.c).
const (
	mlx5QPN    = 0xabc
	mlx5CQN    = 0x3c
	mlx5BFReg  = 5
	mlx5CQESz  = 64
	mlx5RespSz = 72 // struct mlx5_ib_alloc_ucontext_resp
)

// MLX5Host is the mlx5 driver's CQ and RC QP (in RTS) over MLX5Device.
type MLX5Host struct {
	Ctx    provider.Context // closed by the test's cleanup, or before
	CQ     provider.CQ
	Queues provider.Queues
	// Entries is the CQ's size in CQEs.
	Entries uint32

	modified func(state uint32)
	cqBuf    []byte
	put      uint32 // the device's producer count
}

// MLX5Device is the mlx5 fake device: Mmap hands out fresh anonymous
// pages in place of the UAR pages, as the harness's mmap does.
type MLX5Device struct {
	// mu guards pages: a context may close, and unmap, beside a test's
	// other goroutines (cq's TestReqNotifyRacesCloseMLX5).
	mu    sync.Mutex
	pages [][]byte
}

// Mmap maps a fresh page.
func (d *MLX5Device) Mmap(offset uint64, size int) ([]byte, error) {
	b, err := mmapAnon(size)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.pages = append(d.pages, b)
	d.mu.Unlock()
	return b, nil
}

// Munmap unmaps a page Mmap gave.
func (d *MLX5Device) Munmap(b []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, p := range d.pages {
		if len(b) > 0 && &p[0] == &b[0] {
			d.pages = append(d.pages[:i], d.pages[i+1:]...)
			return munmap(p)
		}
	}
	return errors.New("fake device: munmap of memory not mapped here")
}

// Doorbell is never rung by mlx5.
func (d *MLX5Device) Doorbell(uint32) error {
	return errors.New("fake device: mlx5 rang the kernel doorbell")
}

// NewMLX5Host opens a context of the mlx5 driver and creates the CQ and
// the QP of u, answering each command as the harness's fake kernel does,
// and moves the QP to RTS. Everything is closed when tb ends.
func NewMLX5Host(tb testing.TB, u Setup) *MLX5Host {
	tb.Helper()
	h, err := newMLX5Host(tb, u)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func newMLX5Host(tb testing.TB, u Setup) (*MLX5Host, error) {
	d := mlx5.Driver()
	dev := &MLX5Device{}
	var closers []func() error
	tb.Cleanup(func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				tb.Error(err)
			}
		}
		dev.mu.Lock()
		for _, p := range dev.pages {
			munmap(p)
		}
		dev.pages = nil
		dev.mu.Unlock()
	})
	ctx, err := d.NewContext(dev)
	if err != nil {
		return nil, err
	}
	in, out := ctx.Udata(abi.IB_USER_VERBS_CMD_GET_CONTEXT)
	ctx.Start(make([]byte, in))
	if err := ctx.Opened(mlx5ContextResp(out)); err != nil {
		return nil, fmt.Errorf("Opened: %w", err)
	}
	closers = append(closers, ctx.Close)

	h := &MLX5Host{Ctx: ctx}
	cqInit := provider.CQInit{CQE: u.CQ}
	in, out = ctx.Udata(abi.IB_USER_VERBS_CMD_CREATE_CQ)
	req := make([]byte, in)
	pcq, err := ctx.CreateCQ(&cqInit, req)
	if err != nil {
		return nil, err
	}
	h.Entries = cqInit.CQE + 1
	h.cqBuf = mem.User(binary.LittleEndian.Uint64(req[0:]), int(h.Entries)*mlx5CQESz)
	cqInit.Handle, cqInit.Granted = 2, cqInit.CQE
	if h.CQ, err = pcq.Finish(mlx5Word(out, mlx5CQN)); err != nil {
		return nil, err
	}
	closers = append(closers, h.CQ.Close)

	qpInit := provider.QPInit{Type: abi.IB_UVERBS_QPT_RC, MaxSendWR: u.SQ, MaxRecvWR: u.RQ,
		MaxSendSGE: u.MaxSendSGE, MaxRecvSGE: u.MaxRecvSGE, MaxInline: u.MaxInline,
		SendCQ: h.CQ, RecvCQ: h.CQ}
	in, out = ctx.Udata(abi.IB_USER_VERBS_CMD_CREATE_QP)
	pqp, err := ctx.CreateQP(&qpInit, make([]byte, in))
	if err != nil {
		return nil, err
	}
	qpInit.Handle, qpInit.QPNum = 7, mlx5QPN
	if h.Queues, err = pqp.Finish(mlx5Word(out, mlx5BFReg)); err != nil {
		return nil, err
	}
	closers = append(closers, h.Queues.SQ.Close, h.Queues.RQ.Close)
	m, ok := h.Queues.SQ.(interface{ Modified(state uint32) })
	if !ok {
		return nil, errors.New("the mlx5 send queue has no Modified")
	}
	h.modified = m.Modified
	h.Restart()
	return h, nil
}

// Restart moves the QP to RESET, INIT, RTR and RTS, as the harness's
// MODIFY_QPs do: the driver starts its queues over.
func (h *MLX5Host) Restart() {
	for _, st := range []uint32{abi.IB_QPS_RESET, abi.IB_QPS_INIT, abi.IB_QPS_RTR, abi.IB_QPS_RTS} {
		h.modified(st)
	}
}

// FillRQ posts receives with ID 9 until the receive queue is full: the
// ones the CQEs of Fill hand back.
func (h *MLX5Host) FillRQ() {
	sge := []provider.SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}}
	for h.Queues.RQ.Put(&provider.RecvWR{ID: 9, SGE: sge}) == nil {
	}
	h.Queues.RQ.Flush()
}

// Fill has the device write n receive-with-immediate CQEs (4096 bytes,
// immediate 0x01020304, the QP's user index 0), op_own last with the
// owner bit of its pass, as the harness's bench_fill does.
func (h *MLX5Host) Fill(n uint32) {
	var b [mlx5CQESz]byte
	binary.BigEndian.PutUint32(b[36:], 0x01020304)
	binary.BigEndian.PutUint32(b[44:], 4096)
	binary.BigEndian.PutUint32(b[56:], mlx5QPN)
	b[63] = 3 << 4 // MLX5_CQE_RESP_SEND_IMM
	for range n {
		e := h.cqBuf[(h.put&(h.Entries-1))*mlx5CQESz:][:mlx5CQESz]
		copy(e[:mlx5CQESz-1], b[:])
		e[mlx5CQESz-1] = b[63] | byte(h.put/h.Entries&1)
		h.put++
	}
}

// mlx5ContextResp is the harness's GET_CONTEXT driver response (struct
// mlx5_ib_alloc_ucontext_resp), cut or padded to n bytes.
func mlx5ContextResp(n int) []byte {
	b := make([]byte, max(n, mlx5RespSz))
	le := binary.LittleEndian
	le.PutUint32(b[0:], 1<<18) // qp_tab_size
	le.PutUint32(b[4:], 512)   // bf_reg_size
	le.PutUint32(b[8:], 16)    // tot_bfregs
	le.PutUint32(b[12:], 64)   // cache_line_size
	le.PutUint16(b[16:], 1024) // max_sq_desc_sz
	le.PutUint16(b[18:], 512)  // max_rq_desc_sz
	le.PutUint32(b[20:], 1<<15)
	le.PutUint32(b[24:], 1<<15)
	le.PutUint32(b[28:], 1<<15-1)
	le.PutUint16(b[32:], 1) // num_ports
	le.PutUint32(b[40:], mlx5RespSz)
	b[44] = 1                // cqe_version
	b[45] = 3                // cmds_supp_uhw: QUERY_DEVICE | CREATE_AH
	le.PutUint32(b[56:], 12) // log_uar_size
	le.PutUint32(b[60:], 1)  // num_uars_per_page
	return b[:n]
}

// mlx5Word is a driver response whose first word is v, n bytes long.
func mlx5Word(n int, v uint32) []byte {
	b := make([]byte, max(n, 4))
	binary.LittleEndian.PutUint32(b, v)
	return b[:n]
}
