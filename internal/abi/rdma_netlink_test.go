package abi

import "testing"

// TestRDMANetlink pins values that a wrong count in a long C enum would
// shift; they were read from the 6.1 headers with a C compiler.
func TestRDMANetlink(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want int
	}{
		{"RDMA_NL_GET_TYPE(NLDEV, NEWLINK)", int(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK)), 5123},
		{"RDMA_NL_GET_CLIENT", int(RDMA_NL_GET_CLIENT(5123)), RDMA_NL_NLDEV},
		{"RDMA_NL_GET_OP", int(RDMA_NL_GET_OP(5123)), RDMA_NLDEV_CMD_NEWLINK},
		{"RDMA_NLDEV_CMD_GET_CHARDEV", RDMA_NLDEV_CMD_GET_CHARDEV, 15},
		{"RDMA_NLDEV_ATTR_NDEV_NAME", RDMA_NLDEV_ATTR_NDEV_NAME, 51},
		{"RDMA_NLDEV_ATTR_LINK_TYPE", RDMA_NLDEV_ATTR_LINK_TYPE, 65},
		{"RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID", RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, 73},
		{"RDMA_DRIVER_RXE", RDMA_DRIVER_RXE, 14},
		{"RDMA_DRIVER_SIW", RDMA_DRIVER_SIW, 18},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}
