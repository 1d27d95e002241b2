// Constants from include/uapi/rdma/mlx5_user_ioctl_cmds.h (Linux 6.1 and
// 6.12): the mlx5 driver's ioctl object that allocates UARs on demand. A
// library that sets MLX5_LIB_CAP_DYN_UAR in GET_CONTEXT gets no static
// UARs from the kernel (MLX5AllocUcontextResp.TotBfregs is 0) and
// allocates each UAR page with MLX5_IB_METHOD_UAR_OBJ_ALLOC instead, then
// maps it at the offset the kernel returns.
//
// The values are checked against the C compiler in zconst_test.go
// (hack/abigen, test MLX5ABI).

package abi

// The driver's ioctl ids start at 1 << UVERBS_ID_NS_SHIFT.
const (
	// MLX5_IB_OBJECT_UAR is the object of a dynamically allocated UAR
	// page (enum mlx5_ib_objects).
	MLX5_IB_OBJECT_UAR = 1<<UVERBS_ID_NS_SHIFT + 8

	// The methods of MLX5_IB_OBJECT_UAR (enum mlx5_ib_uar_obj_methods).
	MLX5_IB_METHOD_UAR_OBJ_ALLOC   = 1 << UVERBS_ID_NS_SHIFT
	MLX5_IB_METHOD_UAR_OBJ_DESTROY = 1<<UVERBS_ID_NS_SHIFT + 1

	// The attributes of MLX5_IB_METHOD_UAR_OBJ_ALLOC (enum
	// mlx5_ib_uar_alloc_attrs): the new object's handle (out), the type
	// (const in, MLX5_IB_UAPI_UAR_ALLOC_TYPE_*), and the page's mmap
	// offset (u64 out), length (u32 out) and page id (u32 out).
	MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE      = 1 << UVERBS_ID_NS_SHIFT
	MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE        = 1<<UVERBS_ID_NS_SHIFT + 1
	MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET = 1<<UVERBS_ID_NS_SHIFT + 2
	MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH = 1<<UVERBS_ID_NS_SHIFT + 3
	MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID     = 1<<UVERBS_ID_NS_SHIFT + 4

	// MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE is the attribute of
	// MLX5_IB_METHOD_UAR_OBJ_DESTROY (enum mlx5_ib_uar_obj_destroy_attrs).
	MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE = 1 << UVERBS_ID_NS_SHIFT
)
