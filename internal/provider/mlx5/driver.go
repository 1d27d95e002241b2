package mlx5

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/purerdma/purerdma/internal/provider"
)

// Driver returns mlx5's provider; internal/provider/drivers lists it.
func Driver() provider.Driver { return driver{} }

// Sizes of the driver data (include/uapi/rdma/mlx5-abi.h), checked against
// the abi structs in the tests.
const (
	allocUcontextReqSize  = 32 // struct mlx5_ib_alloc_ucontext_req_v2
	allocUcontextRespSize = 72 // struct mlx5_ib_alloc_ucontext_resp
	allocPDRespSize       = 4  // struct mlx5_ib_alloc_pd_resp
	createCQSize          = 32 // struct mlx5_ib_create_cq
	createCQRespSize      = 8  // struct mlx5_ib_create_cq_resp
	resizeCQSize          = 16 // struct mlx5_ib_resize_cq
	createSRQSize         = 32 // struct mlx5_ib_create_srq
	createSRQRespSize     = 8  // struct mlx5_ib_create_srq_resp
	createQPSize          = 56 // struct mlx5_ib_create_qp
	createQPRespSize      = 40 // struct mlx5_ib_create_qp_resp
	createAHRespSize      = 16 // struct mlx5_ib_create_ah_resp
)

type driver struct{}

func (driver) Name() string { return "mlx5" }

// NewContext starts a context on dev with the system's page size, which is
// what libmlx5 sizes its UAR requests and allocations by.
func (driver) NewContext(dev provider.Device) (provider.Context, error) {
	return newContext(dev, os.Getpagesize())
}

// encode writes the fixed-size abi struct v into b, which must hold it
// exactly: the driver data of a command, whose size Udata gave.
func encode(b []byte, v any, what string) error {
	if n := binary.Size(v); n != len(b) {
		return fmt.Errorf("mlx5: %s driver data is %d bytes, want %d: %w", what, len(b), n, provider.ErrInvalid)
	}
	_, err := binary.Encode(b, binary.NativeEndian, v)
	return err
}

// decode reads the abi struct *v from a driver response. A shorter
// response is read as if padded with zeros, which is what libmlx5 sees
// when an older kernel writes less than it asked for: it clears the
// response before the command.
func decode(b []byte, v any) {
	buf := make([]byte, binary.Size(v))
	copy(buf, b)
	binary.Decode(buf, binary.NativeEndian, v)
}

var (
	_ provider.Context = (*context)(nil)
	_ provider.CQ      = (*cq)(nil)
	_ provider.SQ      = (*sendQueue)(nil)
	_ provider.RQ      = (*recvQueue)(nil)
	_ provider.RQ      = (*srq)(nil)
)
