package mlx5

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// fakeDev is a provider.Device whose mappings are plain page-aligned
// memory: the UAR pages the provider writes doorbells to are bytes the
// tests read back.
type fakeDev struct {
	// mu guards maps and mapped: a context may close, and unmap, beside
	// a test's other goroutines.
	mu     sync.Mutex
	t      *testing.T
	maps   map[uint64][]byte // by offset
	mapped int               // live mappings
	fail   bool              // Mmap fails
}

func newFakeDev(t *testing.T) *fakeDev {
	return &fakeDev{t: t, maps: map[uint64][]byte{}}
}

func (d *fakeDev) Mmap(off uint64, size int) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail {
		return nil, errors.New("fake: mmap refused")
	}
	b, err := mem.Alloc(size)
	if err != nil {
		return nil, err
	}
	d.maps[off] = b
	d.mapped++
	return b, nil
}

func (d *fakeDev) Munmap(b []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mapped--
	for off, m := range d.maps {
		if len(m) > 0 && len(b) > 0 && &m[0] == &b[0] {
			delete(d.maps, off)
		}
	}
	return mem.Free(b)
}

// live returns the mappings not yet unmapped.
func (d *fakeDev) live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mapped
}

func (d *fakeDev) Doorbell(uint32) error {
	d.t.Error("mlx5 rang the kernel's doorbell")
	return nil
}

// fakeUARDev also allocates dynamic UARs: page ids from 100, mmap offsets
// from the kernel's (any value does).
type fakeUARDev struct {
	*fakeDev
	next   uint32
	freed  []uint32
	types  []uint32
	length uint32
	fail   bool
}

func (d *fakeUARDev) AllocUAR(allocType uint32) (provider.UAR, error) {
	if d.fail {
		return provider.UAR{}, errors.New("fake: no UAR")
	}
	d.next++
	d.types = append(d.types, allocType)
	n := d.length
	if n == 0 {
		n = uint32(os.Getpagesize())
	}
	return provider.UAR{Handle: d.next, MmapOffset: 0x10000 * uint64(d.next), Length: n, PageID: 99 + d.next}, nil
}

func (d *fakeUARDev) FreeUAR(h uint32) error {
	d.freed = append(d.freed, h)
	return nil
}

// A ConnectX-5's answer to GET_CONTEXT, with the kernel's static UARs
// (TotBfregs) or without (dynamic).
func ucontextResp(static bool) abi.MLX5AllocUcontextResp {
	r := abi.MLX5AllocUcontextResp{
		QPTabSize:      1 << 18,
		BfRegSize:      512,
		CacheLineSize:  64,
		MaxSQDescSz:    1024,
		MaxRQDescSz:    512,
		MaxSendWQEBB:   1 << 15,
		MaxRecvWr:      1 << 15,
		MaxSRQRecvWr:   1<<15 - 1,
		NumPorts:       1,
		CompMask:       abi.MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY,
		ResponseLength: 72,
		CQEVersion:     1,
		CmdsSuppUHW:    abi.MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE | abi.MLX5_USER_CMDS_SUPP_UHW_CREATE_AH,
		LogUARSize:     12,
		NumUARsPerPage: 1,
		DumpFillMkey:   0x5a5a00,
	}
	if static {
		r.TotBfregs = 16
	}
	return r
}

func encodeResp(t *testing.T, v any) []byte {
	t.Helper()
	b := make([]byte, binary.Size(v))
	if _, err := binary.Encode(b, binary.NativeEndian, v); err != nil {
		t.Fatal(err)
	}
	return b
}

// openCtx opens a context on dev with resp, as uverbs does.
func openCtx(t *testing.T, dev provider.Device, resp abi.MLX5AllocUcontextResp) *context {
	t.Helper()
	pc, err := driver{}.NewContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	c := pc.(*context)
	in, out := c.Udata(abi.IB_USER_VERBS_CMD_GET_CONTEXT)
	req := make([]byte, in)
	c.Start(req)
	if out != binary.Size(resp) {
		t.Fatalf("GET_CONTEXT response of %d bytes, want %d", out, binary.Size(resp))
	}
	if err := c.Opened(encodeResp(t, &resp)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newCQ creates a CQ of n entries with CQ number cqn, as uverbs does.
func newCQ(t *testing.T, c *context, n, cqn uint32) *cq {
	t.Helper()
	q := makeCQ(t, c, n, cqn)
	t.Cleanup(func() { q.Close() })
	return q
}

// makeCQ is newCQ without the test's cleanup, which would keep the CQ
// reachable.
func makeCQ(t *testing.T, c *context, n, cqn uint32) *cq {
	t.Helper()
	init := provider.CQInit{CQE: n}
	in, out := c.Udata(abi.IB_USER_VERBS_CMD_CREATE_CQ)
	p, err := c.CreateCQ(&init, make([]byte, in))
	if err != nil {
		t.Fatal(err)
	}
	init.Granted = init.CQE
	resp := make([]byte, out)
	binary.NativeEndian.PutUint32(resp, cqn)
	pcq, err := p.Finish(resp)
	if err != nil {
		t.Fatal(err)
	}
	return pcq.(*cq)
}

// qpOpts describe a QP for newQP.
type qpOpts struct {
	typ               uint8
	sendWR, recvWR    uint32
	sendSGE, recvSGE  uint32
	inline            uint32
	sigAll            bool
	srq               *srq
	qpn               uint32
	bfreg             uint32 // the static bfreg CREATE_QP's response names
	sendCQ, recvCQ    *cq
	cqLock            sync.Locker // both CQs' lock, as the public CQ's
	noCleanup         bool
	wantReq, wantInit func(t *testing.T, req []byte, init *provider.QPInit)
}

// newQP creates a QP as uverbs does: CreateQP, then Finish with the
// kernel's QP number and a response naming o.bfreg.
func newQP(t *testing.T, c *context, o qpOpts) *qp {
	t.Helper()
	if o.typ == 0 {
		o.typ = abi.IB_UVERBS_QPT_RC
	}
	if o.sendCQ == nil {
		o.sendCQ = newCQ(t, c, 64, 0x40)
	}
	if o.recvCQ == nil {
		o.recvCQ = o.sendCQ
	}
	init := provider.QPInit{
		Type: o.typ, MaxSendWR: o.sendWR, MaxRecvWR: o.recvWR,
		MaxSendSGE: o.sendSGE, MaxRecvSGE: o.recvSGE, MaxInline: o.inline,
		SigAll: o.sigAll, SendCQ: o.sendCQ, RecvCQ: o.recvCQ,
		SendCQLock: o.cqLock, RecvCQLock: o.cqLock,
	}
	if o.srq != nil {
		init.SRQ, init.SRQQueue = true, o.srq
	}
	in, out := c.Udata(abi.IB_USER_VERBS_CMD_CREATE_QP)
	req := make([]byte, in)
	p, err := c.CreateQP(&init, req)
	if err != nil {
		t.Fatal(err)
	}
	if o.wantReq != nil {
		o.wantReq(t, req, &init)
	}
	init.QPNum = o.qpn
	resp := make([]byte, out)
	binary.NativeEndian.PutUint32(resp, o.bfreg)
	qs, err := p.Finish(resp)
	if err != nil {
		t.Fatal(err)
	}
	if o.wantInit != nil {
		o.wantInit(t, req, &init)
	}
	q := qs.SQ.(*sendQueue).qp
	if !o.noCleanup {
		t.Cleanup(func() {
			qs.SQ.Close()
			if qs.RQ != nil {
				qs.RQ.Close()
			}
		})
	}
	return q
}

// userBuf is memory outside the Go heap for inline data and scatter
// targets, whose address the provider reads through mem.User.
func userBuf(t *testing.T, n int) []byte {
	t.Helper()
	b, err := mem.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Free(b) })
	return b
}

// hexBytes parses "00 0a ff" into bytes, for literals.
func hexBytes(s string) []byte {
	var b []byte
	var v, n int
	for _, c := range s + " " {
		switch {
		case c >= '0' && c <= '9':
			v, n = v<<4|int(c-'0'), n+1
		case c >= 'a' && c <= 'f':
			v, n = v<<4|int(c-'a'+10), n+1
		default:
			if n > 0 {
				b = append(b, byte(v))
			}
			v, n = 0, 0
		}
	}
	return b
}
