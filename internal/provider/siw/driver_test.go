package siw

import (
	"encoding/binary"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// The structs have no padding, so binary.Size is their C size (which
// internal/abi checks against the C compiler).
func TestSizes(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want int
	}{
		{"siw_sqe", abi.SiwSQE{}, sqeSize},
		{"siw_rqe", abi.SiwRQE{}, rqeSize},
		{"siw_cqe", abi.SiwCQE{}, cqeSize},
		{"siw_cq_ctrl", abi.SiwCQCtrl{}, cqCtrlSize},
		{"siw_uresp_alloc_ctx", abi.SiwUrespAllocCtx{}, allocCtxRespSize},
		{"siw_ureq_reg_mr", abi.SiwUreqRegMR{}, regMRReqSize},
		{"siw_uresp_reg_mr", abi.SiwUrespRegMR{}, regMRRespSize},
		{"siw_uresp_create_cq", abi.SiwUrespCreateCQ{}, createCQRespSize},
		{"siw_uresp_create_qp", abi.SiwUrespCreateQP{}, createQPRespSize},
		{"siw_uresp_create_srq", abi.SiwUrespCreateSRQ{}, createSRQResp},
	} {
		if got := binary.Size(c.v); got != c.want {
			t.Errorf("sizeof(struct %s) = %d, constant says %d", c.name, got, c.want)
		}
	}
	if sqeEnd != sqeSize {
		t.Errorf("inline area ends at %d, element at %d", sqeEnd, sqeSize)
	}
	if sqeEnd-sqeInline != abi.SIW_MAX_INLINE {
		t.Errorf("inline area has %d bytes, SIW_MAX_INLINE is %d", sqeEnd-sqeInline, abi.SIW_MAX_INLINE)
	}
}

func TestUdata(t *testing.T) {
	for _, c := range []struct {
		cmd     uint32
		in, out int
	}{
		{abi.IB_USER_VERBS_CMD_GET_CONTEXT, 0, 8},
		{abi.IB_USER_VERBS_CMD_REG_MR, 8, 8},
		{abi.IB_USER_VERBS_CMD_CREATE_CQ, 0, 16},
		{abi.IB_USER_VERBS_CMD_CREATE_QP, 0, 32},
		{abi.IB_USER_VERBS_CMD_CREATE_SRQ, 0, 16},
		{abi.IB_USER_VERBS_CMD_QUERY_DEVICE, 0, 0}, // siw_query_device refuses any udata
		{abi.IB_USER_VERBS_CMD_ALLOC_PD, 0, 0},
		{abi.IB_USER_VERBS_CMD_CREATE_AH, 0, 0},
		{abi.IB_USER_VERBS_CMD_REREG_MR, 0, 0},
	} {
		in, out := (&devContext{}).Udata(c.cmd)
		if in != c.in || out != c.out {
			t.Errorf("Udata(%d) = %d, %d; want %d, %d", c.cmd, in, out, c.in, c.out)
		}
	}
}

func TestMappings(t *testing.T) {
	t.Run("QP", func(t *testing.T) {
		dev, sq, rq := newQP(t, 8, 16)
		if got, want := dev.sizes[sqKey], 8*120; got != want {
			t.Errorf("SQ mapped %d bytes, want %d", got, want)
		}
		if got, want := dev.sizes[rqKey], 16*112; got != want {
			t.Errorf("RQ mapped %d bytes, want %d", got, want)
		}
		if sq.handle != testHandle || sq.num != 8 || rq.num != 16 || sq.maxSGE != 4 || rq.maxSGE != 3 {
			t.Errorf("sq %+v rq %+v", sq, rq)
		}
		if err := sq.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sq.Close(); err != nil {
			t.Fatal(err)
		}
		if err := rq.Close(); err != nil {
			t.Fatal(err)
		}
		if dev.unmapped != 2 {
			t.Errorf("%d unmaps, want 2", dev.unmapped)
		}
	})
	t.Run("QP with SRQ", func(t *testing.T) {
		dev := newFakeDevice()
		resp := respBytes(abi.SiwUrespCreateQP{NumSQE: 4, SQKey: sqKey, RQKey: abi.SIW_INVAL_UOBJ_KEY})
		sq, rq, err := createQP(dev, provider.QPInit{SRQ: true}, resp)
		if err != nil || sq == nil || rq != nil {
			t.Fatalf("NewQP = %v, %v, %v", sq, rq, err)
		}
		if len(dev.maps) != 1 {
			t.Errorf("%d mappings, want the SQ only", len(dev.maps))
		}
	})
	t.Run("QP without RQ", func(t *testing.T) {
		_, _, rq := newQP(t, 4, 0)
		if err := rq.Put(&provider.RecvWR{}); err != provider.ErrFull {
			t.Errorf("Put on a QP without RQ = %v, want ErrFull", err)
		}
		if err := rq.Close(); err != nil {
			t.Error(err)
		}
	})
	// SIW_INVAL_UOBJ_KEY, 0x90000, is the offset of a context's 145th
	// page since Linux 5.4: a successful command's key is mapped whatever
	// it is (libsiw refuses it and fails there; see mapCQ).
	t.Run("QP with the key 0x90000", func(t *testing.T) {
		dev := newFakeDevice()
		resp := respBytes(abi.SiwUrespCreateQP{NumSQE: 4, NumRQE: 4, SQKey: sqKey, RQKey: abi.SIW_INVAL_UOBJ_KEY})
		sq, rq, err := createQP(dev, provider.QPInit{}, resp)
		if err != nil || sq == nil || rq == nil {
			t.Fatalf("NewQP = %v, %v, %v", sq, rq, err)
		}
		if _, ok := dev.maps[0x90000]; !ok {
			t.Errorf("RQ not mapped at 0x90000: %v", dev.sizes)
		}
	})
	t.Run("QP without send queue", func(t *testing.T) {
		resp := respBytes(abi.SiwUrespCreateQP{NumRQE: 4, SQKey: sqKey, RQKey: 0x3000})
		if _, _, err := createQP(newFakeDevice(), provider.QPInit{}, resp); err == nil {
			t.Fatal("NewQP took a QP with no send queue elements")
		}
	})
	t.Run("CQ", func(t *testing.T) {
		dev, cq := newCQ(t, 32)
		if got, want := dev.sizes[cqKey], 32*32+8; got != want {
			t.Errorf("CQ mapped %d bytes, want %d", got, want)
		}
		if cq.ctrl != 32*32 {
			t.Errorf("ctrl at %d", cq.ctrl)
		}
		dev90 := newFakeDevice()
		if _, err := createCQ(dev90, respBytes(abi.SiwUrespCreateCQ{NumCQE: 4, CQKey: abi.SIW_INVAL_UOBJ_KEY})); err != nil {
			t.Errorf("NewCQ at key 0x90000: %v", err)
		} else if _, ok := dev90.maps[0x90000]; !ok {
			t.Errorf("CQ not mapped at 0x90000")
		}
		if _, err := createCQ(newFakeDevice(), respBytes(abi.SiwUrespCreateCQ{CQKey: cqKey})); err == nil {
			t.Error("NewCQ took a CQ with no elements")
		}
		if _, err := createCQ(newFakeDevice(), make([]byte, 8)); err == nil {
			t.Error("NewCQ took a short response")
		}
	})
	t.Run("SRQ", func(t *testing.T) {
		dev := newFakeDevice()
		srq, err := createSRQ(dev, provider.SRQInit{}, respBytes(abi.SiwUrespCreateSRQ{NumRQE: 64, SRQKey: srqKey}))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := dev.sizes[srqKey], 64*112; got != want {
			t.Errorf("SRQ mapped %d bytes, want %d", got, want)
		}
		if q := srq.(*recvQueue); q.num != 64 || q.maxSGE != abi.SIW_MAX_SGE {
			t.Errorf("srq %+v", q)
		}
	})
}
