package rdmacm

import (
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
)

// TestABIConstants pins every exported constant that is written as a literal
// to the kernel ABI constant its comment names, so that the generated
// internal/abi still governs the values.
func TestABIConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"EventAddrResolved", uint64(EventAddrResolved), abi.RDMA_CM_EVENT_ADDR_RESOLVED},
		{"EventAddrError", uint64(EventAddrError), abi.RDMA_CM_EVENT_ADDR_ERROR},
		{"EventRouteResolved", uint64(EventRouteResolved), abi.RDMA_CM_EVENT_ROUTE_RESOLVED},
		{"EventRouteError", uint64(EventRouteError), abi.RDMA_CM_EVENT_ROUTE_ERROR},
		{"EventConnectRequest", uint64(EventConnectRequest), abi.RDMA_CM_EVENT_CONNECT_REQUEST},
		{"EventConnectResponse", uint64(EventConnectResponse), abi.RDMA_CM_EVENT_CONNECT_RESPONSE},
		{"EventConnectError", uint64(EventConnectError), abi.RDMA_CM_EVENT_CONNECT_ERROR},
		{"EventUnreachable", uint64(EventUnreachable), abi.RDMA_CM_EVENT_UNREACHABLE},
		{"EventRejected", uint64(EventRejected), abi.RDMA_CM_EVENT_REJECTED},
		{"EventEstablished", uint64(EventEstablished), abi.RDMA_CM_EVENT_ESTABLISHED},
		{"EventDisconnected", uint64(EventDisconnected), abi.RDMA_CM_EVENT_DISCONNECTED},
		{"EventDeviceRemoval", uint64(EventDeviceRemoval), abi.RDMA_CM_EVENT_DEVICE_REMOVAL},
		{"EventMulticastJoin", uint64(EventMulticastJoin), abi.RDMA_CM_EVENT_MULTICAST_JOIN},
		{"EventMulticastError", uint64(EventMulticastError), abi.RDMA_CM_EVENT_MULTICAST_ERROR},
		{"EventAddrChange", uint64(EventAddrChange), abi.RDMA_CM_EVENT_ADDR_CHANGE},
		{"EventTimewaitExit", uint64(EventTimewaitExit), abi.RDMA_CM_EVENT_TIMEWAIT_EXIT},
		{"TCP", uint64(TCP), abi.RDMA_PS_TCP},
		{"UDP", uint64(UDP), abi.RDMA_PS_UDP},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
