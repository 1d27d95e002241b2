// Layout and constant tests for siw-abi.h. The expected numbers in the
// tables were printed by the C compiler from the Linux 6.1 headers; do not
// compute them by hand. abi_test.go says how, and why they hold on arm64.

package abi

import (
	"testing"
	"unsafe"
)

func TestSiwABILayout(t *testing.T) {
	checkLayouts(t, []layout{
		{"struct siw_uresp_create_cq", unsafe.Sizeof(SiwUrespCreateCQ{}), 16, []offset{
			{"cq_id", unsafe.Offsetof(SiwUrespCreateCQ{}.CQID), 0},
			{"num_cqe", unsafe.Offsetof(SiwUrespCreateCQ{}.NumCQE), 4},
			{"cq_key", unsafe.Offsetof(SiwUrespCreateCQ{}.CQKey), 8},
		}},
		{"struct siw_uresp_create_qp", unsafe.Sizeof(SiwUrespCreateQP{}), 32, []offset{
			{"qp_id", unsafe.Offsetof(SiwUrespCreateQP{}.QPID), 0},
			{"num_sqe", unsafe.Offsetof(SiwUrespCreateQP{}.NumSQE), 4},
			{"num_rqe", unsafe.Offsetof(SiwUrespCreateQP{}.NumRQE), 8},
			{"pad", unsafe.Offsetof(SiwUrespCreateQP{}.Pad), 12},
			{"sq_key", unsafe.Offsetof(SiwUrespCreateQP{}.SQKey), 16},
			{"rq_key", unsafe.Offsetof(SiwUrespCreateQP{}.RQKey), 24},
		}},
		{"struct siw_ureq_reg_mr", unsafe.Sizeof(SiwUreqRegMR{}), 8, []offset{
			{"stag_key", unsafe.Offsetof(SiwUreqRegMR{}.STagKey), 0},
			{"reserved", unsafe.Offsetof(SiwUreqRegMR{}.Reserved), 1},
			{"pad", unsafe.Offsetof(SiwUreqRegMR{}.Pad), 4},
		}},
		{"struct siw_uresp_reg_mr", unsafe.Sizeof(SiwUrespRegMR{}), 8, []offset{
			{"stag", unsafe.Offsetof(SiwUrespRegMR{}.STag), 0},
			{"pad", unsafe.Offsetof(SiwUrespRegMR{}.Pad), 4},
		}},
		{"struct siw_uresp_create_srq", unsafe.Sizeof(SiwUrespCreateSRQ{}), 16, []offset{
			{"num_rqe", unsafe.Offsetof(SiwUrespCreateSRQ{}.NumRQE), 0},
			{"pad", unsafe.Offsetof(SiwUrespCreateSRQ{}.Pad), 4},
			{"srq_key", unsafe.Offsetof(SiwUrespCreateSRQ{}.SRQKey), 8},
		}},
		{"struct siw_uresp_alloc_ctx", unsafe.Sizeof(SiwUrespAllocCtx{}), 8, []offset{
			{"dev_id", unsafe.Offsetof(SiwUrespAllocCtx{}.DevID), 0},
			{"pad", unsafe.Offsetof(SiwUrespAllocCtx{}.Pad), 4},
		}},
		{"struct siw_sge", unsafe.Sizeof(SiwSGE{}), 16, []offset{
			{"laddr", unsafe.Offsetof(SiwSGE{}.LAddr), 0},
			{"length", unsafe.Offsetof(SiwSGE{}.Length), 8},
			{"lkey", unsafe.Offsetof(SiwSGE{}.LKey), 12},
		}},
		{"struct siw_sqe", unsafe.Sizeof(SiwSQE{}), 120, []offset{
			{"id", unsafe.Offsetof(SiwSQE{}.ID), 0},
			{"flags", unsafe.Offsetof(SiwSQE{}.Flags), 8},
			{"num_sge", unsafe.Offsetof(SiwSQE{}.NumSGE), 10},
			{"opcode", unsafe.Offsetof(SiwSQE{}.Opcode), 11},
			{"rkey", unsafe.Offsetof(SiwSQE{}.RKey), 12},
			{"raddr", unsafe.Offsetof(SiwSQE{}.RAddr), 16},
			{"sge", unsafe.Offsetof(SiwSQE{}.SGE), 24},
		}},
		{"struct siw_rqe", unsafe.Sizeof(SiwRQE{}), 112, []offset{
			{"id", unsafe.Offsetof(SiwRQE{}.ID), 0},
			{"flags", unsafe.Offsetof(SiwRQE{}.Flags), 8},
			{"num_sge", unsafe.Offsetof(SiwRQE{}.NumSGE), 10},
			{"opcode", unsafe.Offsetof(SiwRQE{}.Opcode), 11},
			{"unused", unsafe.Offsetof(SiwRQE{}.Unused), 12},
			{"sge", unsafe.Offsetof(SiwRQE{}.SGE), 16},
		}},
		{"struct siw_cqe", unsafe.Sizeof(SiwCQE{}), 32, []offset{
			{"id", unsafe.Offsetof(SiwCQE{}.ID), 0},
			{"flags", unsafe.Offsetof(SiwCQE{}.Flags), 8},
			{"opcode", unsafe.Offsetof(SiwCQE{}.Opcode), 9},
			{"status", unsafe.Offsetof(SiwCQE{}.Status), 10},
			{"bytes", unsafe.Offsetof(SiwCQE{}.Bytes), 12},
			{"imm_data", unsafe.Offsetof(SiwCQE{}.ImmData), 16},
			{"qp_id", unsafe.Offsetof(SiwCQE{}.QPID), 24},
		}},
		{"struct siw_cq_ctrl", unsafe.Sizeof(SiwCQCtrl{}), 8, []offset{
			{"flags", unsafe.Offsetof(SiwCQCtrl{}.Flags), 0},
			{"pad", unsafe.Offsetof(SiwCQCtrl{}.Pad), 4},
		}},
	})
}

func TestSiwABIConstants(t *testing.T) {
	checkConstants(t, []constant{
		{"SIW_ABI_VERSION", uint64(SIW_ABI_VERSION), 1},
		{"SIW_MAX_SGE", uint64(SIW_MAX_SGE), 6},
		{"SIW_UOBJ_MAX_KEY", uint64(SIW_UOBJ_MAX_KEY), 0x8ffff},
		{"SIW_INVAL_UOBJ_KEY", uint64(SIW_INVAL_UOBJ_KEY), 0x90000},
		{"SIW_MAX_INLINE", uint64(SIW_MAX_INLINE), 80},
		{"SIW_OP_WRITE", uint64(SIW_OP_WRITE), 0},
		{"SIW_OP_READ", uint64(SIW_OP_READ), 1},
		{"SIW_OP_READ_LOCAL_INV", uint64(SIW_OP_READ_LOCAL_INV), 2},
		{"SIW_OP_SEND", uint64(SIW_OP_SEND), 3},
		{"SIW_OP_SEND_WITH_IMM", uint64(SIW_OP_SEND_WITH_IMM), 4},
		{"SIW_OP_SEND_REMOTE_INV", uint64(SIW_OP_SEND_REMOTE_INV), 5},
		{"SIW_OP_FETCH_AND_ADD", uint64(SIW_OP_FETCH_AND_ADD), 6},
		{"SIW_OP_COMP_AND_SWAP", uint64(SIW_OP_COMP_AND_SWAP), 7},
		{"SIW_OP_RECEIVE", uint64(SIW_OP_RECEIVE), 8},
		{"SIW_OP_READ_RESPONSE", uint64(SIW_OP_READ_RESPONSE), 9},
		{"SIW_OP_INVAL_STAG", uint64(SIW_OP_INVAL_STAG), 10},
		{"SIW_OP_REG_MR", uint64(SIW_OP_REG_MR), 11},
		{"SIW_NUM_OPCODES", uint64(SIW_NUM_OPCODES), 12},
		{"SIW_WQE_VALID", uint64(SIW_WQE_VALID), 1},
		{"SIW_WQE_INLINE", uint64(SIW_WQE_INLINE), 2},
		{"SIW_WQE_SIGNALLED", uint64(SIW_WQE_SIGNALLED), 4},
		{"SIW_WQE_SOLICITED", uint64(SIW_WQE_SOLICITED), 8},
		{"SIW_WQE_READ_FENCE", uint64(SIW_WQE_READ_FENCE), 16},
		{"SIW_WQE_REM_INVAL", uint64(SIW_WQE_REM_INVAL), 32},
		{"SIW_WQE_COMPLETED", uint64(SIW_WQE_COMPLETED), 64},
		{"SIW_NOTIFY_NOT", uint64(SIW_NOTIFY_NOT), 0},
		{"SIW_NOTIFY_SOLICITED", uint64(SIW_NOTIFY_SOLICITED), 1},
		{"SIW_NOTIFY_NEXT_COMPLETION", uint64(SIW_NOTIFY_NEXT_COMPLETION), 2},
		{"SIW_NOTIFY_MISSED_EVENTS", uint64(SIW_NOTIFY_MISSED_EVENTS), 4},
		{"SIW_NOTIFY_ALL", uint64(SIW_NOTIFY_ALL), 7},
		{"SIW_WC_SUCCESS", uint64(SIW_WC_SUCCESS), 0},
		{"SIW_WC_LOC_LEN_ERR", uint64(SIW_WC_LOC_LEN_ERR), 1},
		{"SIW_WC_LOC_PROT_ERR", uint64(SIW_WC_LOC_PROT_ERR), 2},
		{"SIW_WC_LOC_QP_OP_ERR", uint64(SIW_WC_LOC_QP_OP_ERR), 3},
		{"SIW_WC_WR_FLUSH_ERR", uint64(SIW_WC_WR_FLUSH_ERR), 4},
		{"SIW_WC_BAD_RESP_ERR", uint64(SIW_WC_BAD_RESP_ERR), 5},
		{"SIW_WC_LOC_ACCESS_ERR", uint64(SIW_WC_LOC_ACCESS_ERR), 6},
		{"SIW_WC_REM_ACCESS_ERR", uint64(SIW_WC_REM_ACCESS_ERR), 7},
		{"SIW_WC_REM_INV_REQ_ERR", uint64(SIW_WC_REM_INV_REQ_ERR), 8},
		{"SIW_WC_GENERAL_ERR", uint64(SIW_WC_GENERAL_ERR), 9},
		{"SIW_NUM_WC_STATUS", uint64(SIW_NUM_WC_STATUS), 10},
	})
}

func TestSiwNodeDesc(t *testing.T) {
	// printf("%s", SIW_NODE_DESC_COMMON) printed this.
	if want := "Software iWARP stack"; SIW_NODE_DESC_COMMON != want {
		t.Errorf("SIW_NODE_DESC_COMMON = %q, want %q", SIW_NODE_DESC_COMMON, want)
	}
}
