package rdmacm

import (
	"fmt"
	"syscall"
)

// EventType is the kind of a connection manager event (enum
// rdma_cm_event_type).
type EventType uint32

// Event types.
const (
	EventAddrResolved    EventType = 0  // RDMA_CM_EVENT_ADDR_RESOLVED
	EventAddrError       EventType = 1  // RDMA_CM_EVENT_ADDR_ERROR
	EventRouteResolved   EventType = 2  // RDMA_CM_EVENT_ROUTE_RESOLVED
	EventRouteError      EventType = 3  // RDMA_CM_EVENT_ROUTE_ERROR
	EventConnectRequest  EventType = 4  // RDMA_CM_EVENT_CONNECT_REQUEST
	EventConnectResponse EventType = 5  // RDMA_CM_EVENT_CONNECT_RESPONSE
	EventConnectError    EventType = 6  // RDMA_CM_EVENT_CONNECT_ERROR
	EventUnreachable     EventType = 7  // RDMA_CM_EVENT_UNREACHABLE
	EventRejected        EventType = 8  // RDMA_CM_EVENT_REJECTED
	EventEstablished     EventType = 9  // RDMA_CM_EVENT_ESTABLISHED
	EventDisconnected    EventType = 10 // RDMA_CM_EVENT_DISCONNECTED
	EventDeviceRemoval   EventType = 11 // RDMA_CM_EVENT_DEVICE_REMOVAL
	EventMulticastJoin   EventType = 12 // RDMA_CM_EVENT_MULTICAST_JOIN
	EventMulticastError  EventType = 13 // RDMA_CM_EVENT_MULTICAST_ERROR
	EventAddrChange      EventType = 14 // RDMA_CM_EVENT_ADDR_CHANGE
	EventTimewaitExit    EventType = 15 // RDMA_CM_EVENT_TIMEWAIT_EXIT
)

// EventType.String prints the constants' names, as rdma_event_str does.
//go:generate go run ../hack/namegen -type EventType -unknown "UNKNOWN EVENT" -doc "String returns rdma_event_str's name of the event type."

// Event is a connection manager event (struct rdma_cm_event). It is
// acknowledged when GetEvent returns it.
type Event struct {
	Type EventType
	// ID is the ID the event is about. For EventConnectRequest it is a
	// new ID for the incoming connection, and Listener is the listening ID.
	ID       *ID
	Listener *ID
	// Status is 0, a negative errno (an address or route error, a timed
	// out connection), or for EventRejected the IB CM reject reason.
	Status int
	// err is the cause of an event that failed in this package (see
	// fail), nil for the kernel's own.
	err error
	// Param holds the connection parameters of EventConnectRequest,
	// EventConnectResponse and EventEstablished (responder resources,
	// initiator depth, ...) and the private data of those and of
	// EventRejected.
	//
	// The read limits are the receiving side's view, as the kernel's
	// connection manager turns them around (cm_format_req_event,
	// cm_format_rep_event): on InfiniBand and RoCE the request's initiator
	// depth arrives as ResponderResources and its responder resources as
	// InitiatorDepth, so a server that accepts with the event's
	// ResponderResources and InitiatorDepth grants what the client asked;
	// copying the event's InitiatorDepth into Accept's ResponderResources
	// (or 0) leaves the client's QP no RDMA reads. On iWARP the request
	// carries what the driver reports (siw: its device maxima). A nil
	// ConnParam in Accept does the right thing on both. Over RoCE the private data of a request is padded with
	// zeros to the 56-byte limit.
	Param ConnParam
}

// Err returns the event's status as an error: nil for 0, the errno for a
// negative status, and for EventRejected an error that matches
// ErrRejected. An event this package failed itself (an address resolved to
// a device it cannot open, a connect response whose QP would not reach
// RTS) returns the error that failed it, which matches the errno in
// Status too.
func (e *Event) Err() error {
	switch {
	case e.err != nil:
		return e.err
	case e.Status == 0:
		return nil
	case e.Type == EventRejected:
		return fmt.Errorf("rdmacm: %w (reason %d)", ErrRejected, e.Status)
	case e.Status < 0:
		return syscall.Errno(-e.Status)
	}
	return fmt.Errorf("rdmacm: %s: status %d", e.Type, e.Status)
}

// String returns the event's type, and its status when that is not 0.
func (e *Event) String() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s, status %d", e.Type, e.Status)
	}
	return e.Type.String()
}
