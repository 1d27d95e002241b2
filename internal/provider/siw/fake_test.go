package siw

import (
	"unsafe"

	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// fakeDevice stands in for the opened uverbs device: Mmap hands out Go
// memory, Doorbell counts.
type fakeDevice struct {
	maps      map[uint64][]byte
	sizes     map[uint64]int
	unmapped  int
	doorbells int
	handle    uint32
	bellErr   error
}

func newFakeDevice() *fakeDevice {
	return &fakeDevice{maps: map[uint64][]byte{}, sizes: map[uint64]int{}}
}

func (d *fakeDevice) Mmap(offset uint64, size int) ([]byte, error) {
	if _, dup := d.maps[offset]; dup {
		return nil, fmt.Errorf("offset %#x mapped twice", offset)
	}
	b := make([]byte, size)
	d.maps[offset] = b
	d.sizes[offset] = size
	return b, nil
}

func (d *fakeDevice) Munmap([]byte) error { d.unmapped++; return nil }

func (d *fakeDevice) Doorbell(qp uint32) error {
	d.doorbells++
	d.handle = qp
	return d.bellErr
}

// Mapping keys the tests hand out in responses.
const (
	cqKey  = 0x1000
	sqKey  = 0x2000
	rqKey  = 0x3000
	srqKey = 0x4000
)

const testHandle = 77

func respBytes[T any](v T) []byte {
	b := make([]byte, 64)
	*mem.At[T](b, 0) = v
	return b
}

// newQP creates a QP with nsqe and nrqe elements on a fake device.
func newQP(t *testing.T, nsqe, nrqe uint32) (*fakeDevice, *sendQueue, *recvQueue) {
	t.Helper()
	dev := newFakeDevice()
	resp := respBytes(abi.SiwUrespCreateQP{QPID: 5, NumSQE: nsqe, NumRQE: nrqe, SQKey: sqKey, RQKey: rqKey})
	init := provider.QPInit{Handle: testHandle, QPNum: 5, MaxSendSGE: 4, MaxRecvSGE: 3}
	sq, rq, err := createQP(dev, init, resp)
	if err != nil {
		t.Fatal(err)
	}
	return dev, sq.(*sendQueue), rq.(*recvQueue)
}

func newCQ(t *testing.T, n uint32) (*fakeDevice, *completionQueue) {
	t.Helper()
	dev := newFakeDevice()
	cq, err := createCQ(dev, respBytes(abi.SiwUrespCreateCQ{CQID: 9, NumCQE: n, CQKey: cqKey}))
	if err != nil {
		t.Fatal(err)
	}
	return dev, cq.(*completionQueue)
}

// sqe decodes send queue element i.
func (q *sendQueue) sqe(i int) abi.SiwSQE { return *mem.At[abi.SiwSQE](q.buf, i*sqeSize) }

// consume plays the kernel taking send element i.
func (q *sendQueue) consume(i int) { mem.Uint32(q.buf, i*sqeSize+flagsWord).Store(0) }

func (q *recvQueue) rqe(i int) abi.SiwRQE { return *mem.At[abi.SiwRQE](q.buf, i*rqeSize) }

func (q *recvQueue) consume(i int) { mem.Uint32(q.buf, i*rqeSize+flagsWord).Store(0) }

// complete plays the kernel writing CQE i: body first, flags last.
func (q *completionQueue) complete(i int, c abi.SiwCQE) {
	p := mem.At[abi.SiwCQE](q.buf, i*cqeSize)
	flags := c.Flags
	c.Flags = 0
	*p = c
	w := uint32(flags) | uint32(c.Opcode)<<8 | uint32(c.Status)<<16
	mem.Uint32(q.buf, i*cqeSize+flagsWord).Store(w)
}

// addr is the address of b's first byte, as an SGE names it.
func addr(b []byte) uint64 { return uint64(reflect.ValueOf(&b[0]).Pointer()) }

func wantUnsupported(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, provider.ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
}

// next takes one completion through Poll, for tests written one
// completion at a time.
func next(c provider.CQ, wc *provider.WC) bool { return c.Poll(unsafe.Slice(wc, 1)) == 1 }
