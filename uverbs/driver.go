package uverbs

import "fmt"

// Driver identifies the kernel driver behind a device (enum
// rdma_driver_id). The provider that runs the data path is chosen by it.
type Driver uint32

// Drivers known to the kernel's uverbs ABI.
const (
	DriverUnknown   Driver = 0
	DriverMLX5      Driver = 1
	DriverMLX4      Driver = 2
	DriverCXGB3     Driver = 3
	DriverCXGB4     Driver = 4
	DriverMTHCA     Driver = 5
	DriverBNXTRE    Driver = 6
	DriverOCRDMA    Driver = 7
	DriverNES       Driver = 8
	DriverIRDMA     Driver = 9
	DriverVMWPVRDMA Driver = 10
	DriverQEDR      Driver = 11
	DriverHNS       Driver = 12
	DriverUSNIC     Driver = 13
	DriverRXE       Driver = 14
	DriverHFI1      Driver = 15
	DriverQIB       Driver = 16
	DriverEFA       Driver = 17
	DriverSIW       Driver = 18
	DriverERDMA     Driver = 19
	DriverMANA      Driver = 20
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
	DriverERDMA: "erdma", DriverMANA: "mana",
}

// String returns rdma-core's provider name for d, e.g. "rxe".
func (d Driver) String() string {
	if s, ok := driverNames[d]; ok {
		return s
	}
	return fmt.Sprintf("Driver(%d)", uint32(d))
}
