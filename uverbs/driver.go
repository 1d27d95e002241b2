package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
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

// driverNames holds the names rdma-core gives its providers, which are
// also the prefixes of the software drivers' default device names.
var driverNames = map[Driver]string{
	DriverMLX5: "mlx5", DriverMLX4: "mlx4", DriverCXGB3: "cxgb3",
	DriverCXGB4: "cxgb4", DriverMTHCA: "mthca", DriverBNXTRE: "bnxt_re",
	DriverOCRDMA: "ocrdma", DriverNES: "nes", DriverIRDMA: "irdma",
	DriverVMWPVRDMA: "vmw_pvrdma", DriverQEDR: "qedr", DriverHNS: "hns",
	DriverUSNIC: "usnic", DriverRXE: "rxe", DriverHFI1: "hfi1",
	DriverQIB: "qib", DriverEFA: "efa", DriverSIW: "siw",
	DriverERDMA: "erdma",
}

// String returns rdma-core's provider name for d, e.g. "rxe".
func (d Driver) String() string {
	if s, ok := driverNames[d]; ok {
		return s
	}
	return fmt.Sprintf("Driver(%d)", uint32(d))
}
