package verbs

import (
	"encoding/binary"
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// The mlx5 driver's UAR object methods, for the mlx5 provider's dynamic
// UARs: Context is the provider.Device every driver gets, and implements
// provider.UARDevice for the one that asserts it. On a device of another
// driver the kernel refuses the methods.
var _ provider.UARDevice = (*Context)(nil)

// AllocUAR allocates a UAR page of allocType
// (MLX5_IB_UAPI_UAR_ALLOC_TYPE_*) with MLX5_IB_METHOD_UAR_OBJ_ALLOC.
func (c *Context) AllocUAR(allocType uint32) (provider.UAR, error) {
	m := allocUARMethod(allocType)
	var off [8]byte
	var length, page [4]byte
	m.Out(abi.MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, off[:])
	m.Out(abi.MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, length[:])
	m.Out(abi.MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, page[:])
	if err := c.Run(m); err != nil {
		return provider.UAR{}, fmt.Errorf("allocate UAR: %w", err)
	}
	h, _ := m.Data(abi.MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE)
	return provider.UAR{
		Handle:     uint32(h),
		MmapOffset: binary.NativeEndian.Uint64(off[:]),
		Length:     binary.NativeEndian.Uint32(length[:]),
		PageID:     binary.NativeEndian.Uint32(page[:]),
	}, nil
}

// allocUARMethod is the ALLOC call without its outputs: the new object's
// handle, which the kernel writes back, and the type.
func allocUARMethod(allocType uint32) *ucmd.Method {
	m := ucmd.NewMethod(abi.MLX5_IB_OBJECT_UAR, abi.MLX5_IB_METHOD_UAR_OBJ_ALLOC)
	m.Handle(abi.MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, 0)
	m.Const(abi.MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, uint64(allocType))
	return m
}

// FreeUAR destroys a UAR object with MLX5_IB_METHOD_UAR_OBJ_DESTROY.
func (c *Context) FreeUAR(handle uint32) error {
	if err := c.Run(freeUARMethod(handle)); err != nil {
		return fmt.Errorf("free UAR %d: %w", handle, err)
	}
	return nil
}

func freeUARMethod(handle uint32) *ucmd.Method {
	m := ucmd.NewMethod(abi.MLX5_IB_OBJECT_UAR, abi.MLX5_IB_METHOD_UAR_OBJ_DESTROY)
	m.Handle(abi.MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE, uint64(handle))
	return m
}
