package rxe

import (
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// The layout constants must match the abi structs, which are checked
// against the C headers in package abi.
func TestSizes(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any
		want int
	}{
		{"rxe_queue_buf", abi.RxeQueueBuf{}, queueHdr},
		{"rxe_send_wqe", abi.RxeSendWQE{}, sendWQEHdr},
		{"rxe_recv_wqe", abi.RxeRecvWQE{}, recvWQEHdr},
		{"rxe_sge", abi.RxeSGE{}, sgeSize},
		{"ib_uverbs_wc", abi.WC{}, wcSize},
		{"mminfo", abi.MMInfo{}, mmInfoSize},
		{"rxe_create_cq_resp", abi.RxeCreateCQResp{}, createCQRespSize},
		{"rxe_resize_cq_resp", abi.RxeResizeCQResp{}, resizeCQRespSize},
		{"rxe_create_qp_resp", abi.RxeCreateQPResp{}, createQPRespSize},
		{"rxe_create_srq_resp", abi.RxeCreateSRQResp{}, createSRQRespSize},
		{"rxe_create_ah_resp", abi.RxeCreateAHResp{}, createAHRespSize},
		{"rxe_modify_srq_cmd", abi.RxeModifySRQCmd{}, modifySRQCmdSize},
	} {
		if got := binary.Size(tt.v); got != tt.want {
			t.Errorf("sizeof(%s) = %d, the package uses %d", tt.name, got, tt.want)
		}
	}
	// Offsets of the indices in rxe_queue_buf.
	b := resp(t, abi.RxeQueueBuf{Log2ElemSize: 1, IndexMask: 2, ProducerIndex: 3, ConsumerIndex: 4})
	for off, want := range map[int]uint32{offElemLog: 1, offMask: 2, offProducer: 3, offConsumer: 4} {
		if got := binary.NativeEndian.Uint32(b[off:]); got != want {
			t.Errorf("word at %d = %d, want %d", off, got, want)
		}
	}
}

func TestUdata(t *testing.T) {
	for _, tt := range []struct {
		cmd     uint32
		in, out int
	}{
		{abi.IB_USER_VERBS_CMD_CREATE_CQ, 0, 16},
		{abi.IB_USER_VERBS_EX_CMD_CREATE_CQ, 0, 16},
		{abi.IB_USER_VERBS_CMD_RESIZE_CQ, 0, 16},
		{abi.IB_USER_VERBS_CMD_CREATE_QP, 0, 32},
		{abi.IB_USER_VERBS_EX_CMD_CREATE_QP, 0, 32},
		{abi.IB_USER_VERBS_CMD_CREATE_SRQ, 0, 24},
		{abi.IB_USER_VERBS_CMD_MODIFY_SRQ, 8, 0},
		{abi.IB_USER_VERBS_CMD_CREATE_AH, 0, 8},
		{abi.IB_USER_VERBS_CMD_GET_CONTEXT, 0, 0},
		{abi.IB_USER_VERBS_CMD_ALLOC_PD, 0, 0},
		{abi.IB_USER_VERBS_CMD_REG_MR, 0, 0},
		{abi.IB_USER_VERBS_CMD_MODIFY_QP, 0, 0},
		{abi.IB_USER_VERBS_EX_CMD_MODIFY_QP, 0, 0},
		{abi.IB_USER_VERBS_CMD_POST_SEND, 0, 0},
	} {
		if in, out := (&devContext{}).Udata(tt.cmd); in != tt.in || out != tt.out {
			t.Errorf("Udata(%d) = %d, %d; want %d, %d", tt.cmd, in, out, tt.in, tt.out)
		}
	}
}

func TestAHNum(t *testing.T) {
	if got, err := (&devContext{}).NewAH(&provider.AHAttr{}, resp(t, abi.RxeCreateAHResp{AHNum: 9})); got.Num != 9 || err != nil {
		t.Errorf("AHNum = %d, %v; want 9", got.Num, err)
	}
	if got, err := (&devContext{}).NewAH(&provider.AHAttr{}, nil); got.Num != 0 || err != nil {
		t.Errorf("AHNum(short) = %d, %v; want 0", got.Num, err)
	}
}

func TestBadHeader(t *testing.T) {
	set := func(b []byte, off int, v uint32) []byte { binary.NativeEndian.PutUint32(b[off:], v); return b }
	tests := []struct {
		name string
		buf  []byte
	}{
		{"mask not 2^n-1", set(ring(7, 4, 0, 0), offMask, 5)},
		{"mask zero", set(ring(7, 4, 0, 0), offMask, 0)},
		{"mask all ones", set(ring(7, 4, 0, 0), offMask, ^uint32(0))},
		{"slots overrun the mapping", set(ring(7, 4, 0, 0), offMask, 7)},
		{"elements overrun the mapping", set(ring(7, 4, 0, 0), offElemLog, 8)},
		{"element too small", ring(5, 8, 0, 0)},
		{"huge element", set(ring(7, 4, 0, 0), offElemLog, 40)},
		{"producer beyond the mask", ring(7, 4, 4, 0)},
		{"consumer beyond the mask", ring(7, 4, 0, 9)},
		{"shorter than the header", make([]byte, 100)},
		{"4 GiB of slots", set(ring(7, 4, 0, 0), offMask, 1<<25-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := &fakeDev{maps: map[uint64][]byte{0: tt.buf}}
			_, err := createCQ(dev, resp(t, abi.RxeCreateCQResp{MI: mi(0, tt.buf)}))
			if !errors.Is(err, provider.ErrInvalid) {
				t.Fatalf("NewCQ = %v, want EINVAL", err)
			}
			if len(tt.buf) >= queueHdr && dev.unmapped != 1 {
				t.Errorf("bad mapping left mapped (%d munmaps)", dev.unmapped)
			}
		})
	}
}

func TestNewQP(t *testing.T) {
	// With an SRQ there is no receive queue, and a nil interface.
	sqBuf := ring(8, 4, 0, 0)
	dev := &fakeDev{maps: map[uint64][]byte{8192: sqBuf}}
	init := rcInit
	init.SRQ = true
	s, r, err := createQP(dev, init, resp(t, abi.RxeCreateQPResp{SQMI: mi(8192, sqBuf)}))
	if err != nil || s == nil || r != nil {
		t.Fatalf("NewQP with SRQ = %v, %v, %v; want an SQ and a nil RQ", s, r, err)
	}

	// A bad send queue unmaps the receive queue that was mapped first.
	rqBuf, bad := ring(7, 8, 0, 0), ring(6, 4, 0, 0)
	dev = &fakeDev{maps: map[uint64][]byte{4096: rqBuf, 8192: bad}}
	_, _, err = createQP(dev, rcInit, resp(t, abi.RxeCreateQPResp{RQMI: mi(4096, rqBuf), SQMI: mi(8192, bad)}))
	if !errors.Is(err, provider.ErrInvalid) || dev.unmapped != 2 {
		t.Errorf("NewQP with a bad SQ = %v, %d munmaps; want EINVAL, 2", err, dev.unmapped)
	}

	if _, _, err := createQP(dev, rcInit, make([]byte, 16)); !errors.Is(err, provider.ErrInvalid) {
		t.Errorf("NewQP with a short response = %v, want EINVAL", err)
	}
	dev.mmapErr = unix.ENOMEM
	if _, err := createCQ(dev, resp(t, abi.RxeCreateCQResp{MI: mi(4096, rqBuf)})); !errors.Is(err, unix.ENOMEM) {
		t.Errorf("NewCQ with a failing mmap = %v, want ENOMEM", err)
	}
}
