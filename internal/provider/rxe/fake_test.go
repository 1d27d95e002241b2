package rxe

import (
	"unsafe"

	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// fakeDev is a provider.Device whose mappings are Go byte slices.
type fakeDev struct {
	maps      map[uint64][]byte // by mmap offset
	unmapped  int
	doorbells int
	lastQP    uint32
	mmapErr   error
}

func (d *fakeDev) Mmap(offset uint64, size int) ([]byte, error) {
	if d.mmapErr != nil {
		return nil, d.mmapErr
	}
	b, ok := d.maps[offset]
	if !ok {
		return nil, errors.New("fake: no mapping at offset")
	}
	if size > len(b) {
		return nil, errors.New("fake: mapping too large")
	}
	return b[:size], nil
}

func (d *fakeDev) Munmap(b []byte) error { d.unmapped++; return nil }

func (d *fakeDev) Doorbell(qp uint32) error { d.doorbells++; d.lastQP = qp; return nil }

// ring returns a valid rxe_queue_buf with slots of 1<<log2 bytes.
func ring(log2, slots, prod, cons uint32) []byte {
	b := make([]byte, queueHdr+int(slots)<<log2)
	binary.NativeEndian.PutUint32(b[offElemLog:], log2)
	binary.NativeEndian.PutUint32(b[offMask:], slots-1)
	binary.NativeEndian.PutUint32(b[offProducer:], prod)
	binary.NativeEndian.PutUint32(b[offConsumer:], cons)
	return b
}

func producer(b []byte) uint32 { return binary.NativeEndian.Uint32(b[offProducer:]) }
func consumer(b []byte) uint32 { return binary.NativeEndian.Uint32(b[offConsumer:]) }

func setConsumer(b []byte, v uint32) { binary.NativeEndian.PutUint32(b[offConsumer:], v) }
func setProducer(b []byte, v uint32) { binary.NativeEndian.PutUint32(b[offProducer:], v) }

func slotOf(b []byte, i int) []byte {
	log2 := binary.NativeEndian.Uint32(b[offElemLog:])
	off := queueHdr + i<<log2
	return b[off : off+1<<log2]
}

// resp encodes a driver response struct.
func resp(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.NativeEndian, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := binary.Read(bytes.NewReader(b), binary.NativeEndian, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func mi(off uint64, b []byte) abi.MMInfo { return abi.MMInfo{Offset: off, Size: uint32(len(b))} }

// addr returns the address of b's first byte for an SGE. The garbage
// collector does not move heap objects; the caller keeps b alive.
func addr(b []byte) uint64 { return uint64(reflect.ValueOf(&b[0]).Pointer()) }

// newQP maps a QP on fresh rings: a send queue of sqSlots slots of
// 1<<sqLog2 bytes and a receive queue of 8 slots of 128 bytes.
func newQP(t *testing.T, init provider.QPInit, sqLog2, sqSlots uint32) (*fakeDev, *sq, *rq, []byte, []byte) {
	t.Helper()
	sqBuf, rqBuf := ring(sqLog2, sqSlots, 0, 0), ring(7, 8, 0, 0)
	dev := &fakeDev{maps: map[uint64][]byte{4096: rqBuf, 8192: sqBuf}}
	r := resp(t, abi.RxeCreateQPResp{RQMI: mi(4096, rqBuf), SQMI: mi(8192, sqBuf)})
	s, q, err := createQP(dev, init, r)
	if err != nil {
		t.Fatal(err)
	}
	var rqp *rq
	if q != nil {
		rqp = q.(*rq)
	}
	return dev, s.(*sq), rqp, sqBuf, rqBuf
}

// next takes one completion through Poll, for tests written one
// completion at a time.
func next(c provider.CQ, wc *provider.WC) bool { return c.Poll(unsafe.Slice(wc, 1)) == 1 }
