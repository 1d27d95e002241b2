package uverbs

import (
	"fmt"
	"testing"
)

// TestNames pins the String of every named value of the enums whose names
// are generated (hack/namegen) or hand-kept, and what other values print.
func TestNames(t *testing.T) {
	for _, tt := range []struct {
		v    fmt.Stringer
		want string
	}{
		{NodeCA, "CA"},
		{NodeSwitch, "switch"},
		{NodeRouter, "router"},
		{NodeRNIC, "RNIC"},
		{NodeUSNIC, "usNIC"},
		{NodeUSNICUD, "usNIC UDP"},
		{NodeUnspec, "unspecified"},
		{NodeType(0), "NodeType(0)"},
		{NodeType(8), "NodeType(8)"},

		{EventCQErr, "CQ error"},
		{EventQPFatal, "local work queue catastrophic error"},
		{EventQPReqErr, "invalid request local work queue error"},
		{EventQPAccessErr, "local access violation work queue error"},
		{EventCommEst, "communication established"},
		{EventSQDrained, "send queue drained"},
		{EventPathMig, "path migrated"},
		{EventPathMigErr, "path migration request error"},
		{EventDeviceFatal, "local catastrophic error"},
		{EventPortActive, "port active"},
		{EventPortErr, "port error"},
		{EventLIDChange, "LID change"},
		{EventPKeyChange, "P_Key change"},
		{EventSMChange, "SM change"},
		{EventSRQErr, "SRQ catastrophic error"},
		{EventSRQLimitReached, "SRQ limit reached"},
		{EventQPLastWQEReached, "last WQE reached"},
		{EventClientReregister, "client reregistration"},
		{EventGIDChange, "GID table change"},
		{EventWQFatal, "WQ fatal"},
		{EventType(20), "unknown"},
		{EventType(1 << 31), "unknown"},

		{GIDTypeIB, "IB"},
		{GIDTypeRoCEv1, "RoCE v1"},
		{GIDTypeRoCEv2, "RoCE v2"},
		{GIDType(3), "GIDType(3)"},

		{RC, "RC"},
		{UC, "UC"},
		{UD, "UD"},
		{QPType(0), "QPType(0)"},
		{QPType(255), "QPType(255)"},

		{QPSReset, "RESET"},
		{QPSInit, "INIT"},
		{QPSRTR, "RTR"},
		{QPSRTS, "RTS"},
		{QPSSQD, "SQD"},
		{QPSSQE, "SQE"},
		{QPSErr, "ERR"},
		{QPState(7), "QPState(7)"},
		{QPState(255), "QPState(255)"},

		{PortNop, "PORT_NOP"},
		{PortDown, "PORT_DOWN"},
		{PortInit, "PORT_INIT"},
		{PortArmed, "PORT_ARMED"},
		{PortActive, "PORT_ACTIVE"},
		{PortActiveDefer, "PORT_ACTIVE_DEFER"},
		{PortState(6), "invalid state"},
		{PortState(255), "invalid state"},

		{LinkLayerUnspecified, "InfiniBand"},
		{LinkLayerInfiniBand, "InfiniBand"},
		{LinkLayerEthernet, "Ethernet"},
		{LinkLayer(3), "Unknown"},

		{WRRDMAWrite, "RDMA_WRITE"},
		{WRRDMAWriteWithImm, "RDMA_WRITE_WITH_IMM"},
		{WRSend, "SEND"},
		{WRSendWithImm, "SEND_WITH_IMM"},
		{WRRDMARead, "RDMA_READ"},
		{WRAtomicCmpAndSwp, "ATOMIC_CMP_AND_SWP"},
		{WRAtomicFetchAndAdd, "ATOMIC_FETCH_AND_ADD"},
		{WRLocalInv, "LOCAL_INV"},
		{WRSendWithInv, "SEND_WITH_INV"},
		{WRFlush, "FLUSH"},
		{WRAtomicWrite, "ATOMIC_WRITE"},
		{WRBindMW, "BIND_MW"},
		{WROpcode(1<<32 - 1), "WROpcode(4294967295)"},

		{FlushType(0), "FlushType(0)"},
		{FlushType(5), "FlushType(5)"},
		{FlushType(255), "FlushType(255)"},
		{FlushLevel(255), "FlushLevel(255)"},

		{DriverMLX5, "mlx5"},
		{DriverBNXTRE, "bnxt_re"},
		{DriverIRDMA, "irdma"},
		{DriverVMWPVRDMA, "vmw_pvrdma"},
		{DriverRXE, "rxe"},
		{DriverSIW, "siw"},
		{DriverERDMA, "erdma"},
		{Driver(0), "Driver(0)"},
		{Driver(20), "Driver(20)"},
	} {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%T(%#v).String() = %q, want %q", tt.v, tt.v, got, tt.want)
		}
	}
}
