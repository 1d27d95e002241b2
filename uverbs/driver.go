package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider/drivers"
)

// Driver identifies the kernel driver behind a device (enum
// rdma_driver_id). The provider that runs the data path is chosen by it.
type Driver uint32

// Drivers known to the kernel's uverbs ABI (Linux 6.1).
const (
	DriverUnknown   Driver = abi.RDMA_DRIVER_UNKNOWN
	DriverMLX5      Driver = abi.RDMA_DRIVER_MLX5
	DriverMLX4      Driver = abi.RDMA_DRIVER_MLX4
	DriverCXGB3     Driver = abi.RDMA_DRIVER_CXGB3
	DriverCXGB4     Driver = abi.RDMA_DRIVER_CXGB4
	DriverMTHCA     Driver = abi.RDMA_DRIVER_MTHCA
	DriverBNXTRE    Driver = abi.RDMA_DRIVER_BNXT_RE
	DriverOCRDMA    Driver = abi.RDMA_DRIVER_OCRDMA
	DriverNES       Driver = abi.RDMA_DRIVER_NES
	DriverIRDMA     Driver = abi.RDMA_DRIVER_IRDMA
	DriverVMWPVRDMA Driver = abi.RDMA_DRIVER_VMW_PVRDMA
	DriverQEDR      Driver = abi.RDMA_DRIVER_QEDR
	DriverHNS       Driver = abi.RDMA_DRIVER_HNS
	DriverUSNIC     Driver = abi.RDMA_DRIVER_USNIC
	DriverRXE       Driver = abi.RDMA_DRIVER_RXE
	DriverHFI1      Driver = abi.RDMA_DRIVER_HFI1
	DriverQIB       Driver = abi.RDMA_DRIVER_QIB
	DriverEFA       Driver = abi.RDMA_DRIVER_EFA
	DriverSIW       Driver = abi.RDMA_DRIVER_SIW
	DriverERDMA     Driver = abi.RDMA_DRIVER_ERDMA
)

// String returns rdma-core's provider name for d, e.g. "rxe".
func (d Driver) String() string {
	if s := drivers.Name(uint32(d)); s != "" {
		return s
	}
	return fmt.Sprintf("Driver(%d)", uint32(d))
}
