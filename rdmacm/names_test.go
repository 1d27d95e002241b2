package rdmacm

import "testing"

// TestEventTypeNames pins rdma_event_str's name of every event type and
// what other values print.
func TestEventTypeNames(t *testing.T) {
	for _, tt := range []struct {
		e    EventType
		want string
	}{
		{EventAddrResolved, "RDMA_CM_EVENT_ADDR_RESOLVED"},
		{EventAddrError, "RDMA_CM_EVENT_ADDR_ERROR"},
		{EventRouteResolved, "RDMA_CM_EVENT_ROUTE_RESOLVED"},
		{EventRouteError, "RDMA_CM_EVENT_ROUTE_ERROR"},
		{EventConnectRequest, "RDMA_CM_EVENT_CONNECT_REQUEST"},
		{EventConnectResponse, "RDMA_CM_EVENT_CONNECT_RESPONSE"},
		{EventConnectError, "RDMA_CM_EVENT_CONNECT_ERROR"},
		{EventUnreachable, "RDMA_CM_EVENT_UNREACHABLE"},
		{EventRejected, "RDMA_CM_EVENT_REJECTED"},
		{EventEstablished, "RDMA_CM_EVENT_ESTABLISHED"},
		{EventDisconnected, "RDMA_CM_EVENT_DISCONNECTED"},
		{EventDeviceRemoval, "RDMA_CM_EVENT_DEVICE_REMOVAL"},
		{EventMulticastJoin, "RDMA_CM_EVENT_MULTICAST_JOIN"},
		{EventMulticastError, "RDMA_CM_EVENT_MULTICAST_ERROR"},
		{EventAddrChange, "RDMA_CM_EVENT_ADDR_CHANGE"},
		{EventTimewaitExit, "RDMA_CM_EVENT_TIMEWAIT_EXIT"},
		{0, "RDMA_CM_EVENT_ADDR_RESOLVED"},
		{15, "RDMA_CM_EVENT_TIMEWAIT_EXIT"},
		{16, "UNKNOWN EVENT"},
		{1 << 31, "UNKNOWN EVENT"},
	} {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("EventType(%d).String() = %q, want %q", uint32(tt.e), got, tt.want)
		}
	}
}
