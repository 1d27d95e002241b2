package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/provider/drivers"
)

// Driver identifies the kernel driver behind a device (enum
// rdma_driver_id). The provider that runs the data path is chosen by it.
type Driver uint32

// Drivers known to the kernel's uverbs ABI (Linux 6.1).
const (
	DriverUnknown   Driver = 0  // RDMA_DRIVER_UNKNOWN
	DriverMLX5      Driver = 1  // RDMA_DRIVER_MLX5
	DriverMLX4      Driver = 2  // RDMA_DRIVER_MLX4
	DriverCXGB3     Driver = 3  // RDMA_DRIVER_CXGB3
	DriverCXGB4     Driver = 4  // RDMA_DRIVER_CXGB4
	DriverMTHCA     Driver = 5  // RDMA_DRIVER_MTHCA
	DriverBNXTRE    Driver = 6  // RDMA_DRIVER_BNXT_RE
	DriverOCRDMA    Driver = 7  // RDMA_DRIVER_OCRDMA
	DriverNES       Driver = 8  // RDMA_DRIVER_NES
	DriverIRDMA     Driver = 9  // RDMA_DRIVER_IRDMA
	DriverVMWPVRDMA Driver = 10 // RDMA_DRIVER_VMW_PVRDMA
	DriverQEDR      Driver = 11 // RDMA_DRIVER_QEDR
	DriverHNS       Driver = 12 // RDMA_DRIVER_HNS
	DriverUSNIC     Driver = 13 // RDMA_DRIVER_USNIC
	DriverRXE       Driver = 14 // RDMA_DRIVER_RXE
	DriverHFI1      Driver = 15 // RDMA_DRIVER_HFI1
	DriverQIB       Driver = 16 // RDMA_DRIVER_QIB
	DriverEFA       Driver = 17 // RDMA_DRIVER_EFA
	DriverSIW       Driver = 18 // RDMA_DRIVER_SIW
	DriverERDMA     Driver = 19 // RDMA_DRIVER_ERDMA
)

// String returns rdma-core's provider name for d, e.g. "rxe".
func (d Driver) String() string {
	if s := drivers.Name(uint32(d)); s != "" {
		return s
	}
	return fmt.Sprintf("Driver(%d)", uint32(d))
}
