// Constants from include/uapi/rdma/ib_user_ioctl_verbs.h (Linux 6.1).

package abi

// enum rdma_driver_id: the driver behind a device, as the uverbs ABI and
// RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID report it.
const (
	RDMA_DRIVER_UNKNOWN    = 0
	RDMA_DRIVER_MLX5       = 1
	RDMA_DRIVER_MLX4       = 2
	RDMA_DRIVER_CXGB3      = 3
	RDMA_DRIVER_CXGB4      = 4
	RDMA_DRIVER_MTHCA      = 5
	RDMA_DRIVER_BNXT_RE    = 6
	RDMA_DRIVER_OCRDMA     = 7
	RDMA_DRIVER_NES        = 8
	RDMA_DRIVER_I40IW      = 9
	RDMA_DRIVER_IRDMA      = RDMA_DRIVER_I40IW
	RDMA_DRIVER_VMW_PVRDMA = 10
	RDMA_DRIVER_QEDR       = 11
	RDMA_DRIVER_HNS        = 12
	RDMA_DRIVER_USNIC      = 13
	RDMA_DRIVER_RXE        = 14
	RDMA_DRIVER_HFI1       = 15
	RDMA_DRIVER_QIB        = 16
	RDMA_DRIVER_EFA        = 17
	RDMA_DRIVER_SIW        = 18
	RDMA_DRIVER_ERDMA      = 19
)
