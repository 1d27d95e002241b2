// Constants from include/uapi/rdma/mlx5_user_ioctl_verbs.h (Linux 6.1 and
// 6.12). The values are checked against the C compiler in zconst_test.go
// (hack/abigen, test MLX5ABI).

package abi

// The types of UAR MLX5_IB_METHOD_UAR_OBJ_ALLOC allocates (enum
// mlx5_ib_uapi_uar_alloc_type): write-combining, for BlueFlame, or
// non-cached, for doorbells only.
const (
	MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF = 0x0
	MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC = 0x1
)
