package abi

import "testing"

// TestRDMANetlinkType checks that RDMA_NL_GET_CLIENT and RDMA_NL_GET_OP undo
// RDMA_NL_GET_TYPE, whose C value TestRDMANetlinkConstants checks.
func TestRDMANetlinkType(t *testing.T) {
	typ := RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK)
	if got := RDMA_NL_GET_CLIENT(typ); int(got) != RDMA_NL_NLDEV {
		t.Errorf("RDMA_NL_GET_CLIENT(%d) = %d, want %d", typ, got, RDMA_NL_NLDEV)
	}
	if got := RDMA_NL_GET_OP(typ); int(got) != RDMA_NLDEV_CMD_NEWLINK {
		t.Errorf("RDMA_NL_GET_OP(%d) = %d, want %d", typ, got, RDMA_NLDEV_CMD_NEWLINK)
	}
}
