package cq

import "testing"

// TestStatusNames pins every status's text, ibv_wc_status_str's, and
// what a status beyond the table prints.
func TestStatusNames(t *testing.T) {
	for _, tt := range []struct {
		s    Status
		want string
	}{
		{Success, "success"},
		{LocLenErr, "local length error"},
		{LocQPOpErr, "local QP operation error"},
		{LocEECOpErr, "local EE context operation error"},
		{LocProtErr, "local protection error"},
		{WRFlushErr, "Work Request Flushed Error"},
		{MWBindErr, "memory management operation error"},
		{BadRespErr, "bad response error"},
		{LocAccessErr, "local access error"},
		{RemInvReqErr, "remote invalid request error"},
		{RemAccessErr, "remote access error"},
		{RemOpErr, "remote operation error"},
		{RetryExcErr, "transport retry counter exceeded"},
		{RNRRetryExcErr, "RNR retry counter exceeded"},
		{LocRDDViolErr, "local RDD violation error"},
		{RemInvRdReqErr, "remote invalid RD request"},
		{RemAbortErr, "aborted error"},
		{InvEECNErr, "invalid EE context number"},
		{InvEECStateErr, "invalid EE context state"},
		{FatalErr, "fatal error"},
		{RespTimeoutErr, "response timeout error"},
		{GeneralErr, "general error"},
		{TMErr, "TM error"},
		{TMRndvIncomplete, "TM software rendezvous"},
		{5, "Work Request Flushed Error"},
		{24, "unknown"},
		{1 << 31, "unknown"},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("Status(%d).String() = %q, want %q", uint32(tt.s), got, tt.want)
		}
	}
}

// TestOpcodeAllNames pins the name of every opcode, the IBV_WC_ constant's
// without its prefix, and what other values print.
func TestOpcodeAllNames(t *testing.T) {
	for _, tt := range []struct {
		op   Opcode
		want string
	}{
		{OpSend, "SEND"},
		{OpRDMAWrite, "RDMA_WRITE"},
		{OpRDMARead, "RDMA_READ"},
		{OpCompSwap, "COMP_SWAP"},
		{OpFetchAdd, "FETCH_ADD"},
		{OpBindMW, "BIND_MW"},
		{OpLocalInv, "LOCAL_INV"},
		{OpTSO, "TSO"},
		{OpFlush, "FLUSH"},
		{OpAtomicWrite, "ATOMIC_WRITE"},
		{OpRecv, "RECV"},
		{OpRecvRDMAWithImm, "RECV_RDMA_WITH_IMM"},
		{0, "SEND"},
		{7, "TSO"},
		{129, "RECV_RDMA_WITH_IMM"},
		{11, "Opcode(11)"},
		{130, "Opcode(130)"},
		{1<<32 - 1, "Opcode(4294967295)"},
	} {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("Opcode(%d).String() = %q, want %q", uint32(tt.op), got, tt.want)
		}
	}
}
