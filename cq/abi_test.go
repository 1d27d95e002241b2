package cq

import (
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
)

// TestABIConstants pins every exported constant that is written as a literal
// to the kernel ABI constant its comment names, so that the generated
// internal/abi still governs the values.
func TestABIConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"Success", uint64(Success), abi.IB_WC_SUCCESS},
		{"LocLenErr", uint64(LocLenErr), abi.IB_WC_LOC_LEN_ERR},
		{"LocQPOpErr", uint64(LocQPOpErr), abi.IB_WC_LOC_QP_OP_ERR},
		{"LocEECOpErr", uint64(LocEECOpErr), abi.IB_WC_LOC_EEC_OP_ERR},
		{"LocProtErr", uint64(LocProtErr), abi.IB_WC_LOC_PROT_ERR},
		{"WRFlushErr", uint64(WRFlushErr), abi.IB_WC_WR_FLUSH_ERR},
		{"MWBindErr", uint64(MWBindErr), abi.IB_WC_MW_BIND_ERR},
		{"BadRespErr", uint64(BadRespErr), abi.IB_WC_BAD_RESP_ERR},
		{"LocAccessErr", uint64(LocAccessErr), abi.IB_WC_LOC_ACCESS_ERR},
		{"RemInvReqErr", uint64(RemInvReqErr), abi.IB_WC_REM_INV_REQ_ERR},
		{"RemAccessErr", uint64(RemAccessErr), abi.IB_WC_REM_ACCESS_ERR},
		{"RemOpErr", uint64(RemOpErr), abi.IB_WC_REM_OP_ERR},
		{"RetryExcErr", uint64(RetryExcErr), abi.IB_WC_RETRY_EXC_ERR},
		{"RNRRetryExcErr", uint64(RNRRetryExcErr), abi.IB_WC_RNR_RETRY_EXC_ERR},
		{"LocRDDViolErr", uint64(LocRDDViolErr), abi.IB_WC_LOC_RDD_VIOL_ERR},
		{"RemInvRdReqErr", uint64(RemInvRdReqErr), abi.IB_WC_REM_INV_RD_REQ_ERR},
		{"RemAbortErr", uint64(RemAbortErr), abi.IB_WC_REM_ABORT_ERR},
		{"InvEECNErr", uint64(InvEECNErr), abi.IB_WC_INV_EECN_ERR},
		{"InvEECStateErr", uint64(InvEECStateErr), abi.IB_WC_INV_EEC_STATE_ERR},
		{"FatalErr", uint64(FatalErr), abi.IB_WC_FATAL_ERR},
		{"RespTimeoutErr", uint64(RespTimeoutErr), abi.IB_WC_RESP_TIMEOUT_ERR},
		{"GeneralErr", uint64(GeneralErr), abi.IB_WC_GENERAL_ERR},
		{"OpSend", uint64(OpSend), abi.IB_WC_SEND},
		{"OpRDMAWrite", uint64(OpRDMAWrite), abi.IB_WC_RDMA_WRITE},
		{"OpRDMARead", uint64(OpRDMARead), abi.IB_WC_RDMA_READ},
		{"OpCompSwap", uint64(OpCompSwap), abi.IB_WC_COMP_SWAP},
		{"OpFetchAdd", uint64(OpFetchAdd), abi.IB_WC_FETCH_ADD},
		{"OpBindMW", uint64(OpBindMW), abi.IB_WC_BIND_MW},
		{"OpLocalInv", uint64(OpLocalInv), abi.IB_WC_LOCAL_INV},
		{"OpTSO", uint64(OpTSO), abi.IB_WC_LSO},
		{"OpFlush", uint64(OpFlush), abi.IB_WC_FLUSH},
		{"OpAtomicWrite", uint64(OpAtomicWrite), abi.IB_WC_ATOMIC_WRITE},
		{"OpRecv", uint64(OpRecv), abi.IB_WC_RECV},
		{"OpRecvRDMAWithImm", uint64(OpRecvRDMAWithImm), abi.IB_WC_RECV_RDMA_WITH_IMM},
		{"GRH", uint64(GRH), abi.IB_WC_GRH},
		{"WithImm", uint64(WithImm), abi.IB_WC_WITH_IMM},
		{"WithInv", uint64(WithInv), abi.IB_WC_WITH_INVALIDATE},
		{"IPCsumOK", uint64(IPCsumOK), abi.IB_WC_IP_CSUM_OK},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
