package uverbs

import (
	"context"
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// EventType is the kind of an asynchronous event (enum ibv_event_type).
type EventType uint32

// Asynchronous event types.
const (
	EventCQErr            EventType = 0  // IB_EVENT_CQ_ERR
	EventQPFatal          EventType = 1  // IB_EVENT_QP_FATAL
	EventQPReqErr         EventType = 2  // IB_EVENT_QP_REQ_ERR
	EventQPAccessErr      EventType = 3  // IB_EVENT_QP_ACCESS_ERR
	EventCommEst          EventType = 4  // IB_EVENT_COMM_EST
	EventSQDrained        EventType = 5  // IB_EVENT_SQ_DRAINED
	EventPathMig          EventType = 6  // IB_EVENT_PATH_MIG
	EventPathMigErr       EventType = 7  // IB_EVENT_PATH_MIG_ERR
	EventDeviceFatal      EventType = 8  // IB_EVENT_DEVICE_FATAL
	EventPortActive       EventType = 9  // IB_EVENT_PORT_ACTIVE
	EventPortErr          EventType = 10 // IB_EVENT_PORT_ERR
	EventLIDChange        EventType = 11 // IB_EVENT_LID_CHANGE
	EventPKeyChange       EventType = 12 // IB_EVENT_PKEY_CHANGE
	EventSMChange         EventType = 13 // IB_EVENT_SM_CHANGE
	EventSRQErr           EventType = 14 // IB_EVENT_SRQ_ERR
	EventSRQLimitReached  EventType = 15 // IB_EVENT_SRQ_LIMIT_REACHED
	EventQPLastWQEReached EventType = 16 // IB_EVENT_QP_LAST_WQE_REACHED
	EventClientReregister EventType = 17 // IB_EVENT_CLIENT_REREGISTER
	EventGIDChange        EventType = 18 // IB_EVENT_GID_CHANGE
	EventWQFatal          EventType = 19 // IB_EVENT_WQ_FATAL
)

// eventNames are ibv_event_type_str's texts (rdma-core's
// libibverbs/enum_strs.c), keyed by the constants as there. They are no C
// constant names, so hack/namegen cannot make them: they are kept by hand.
var eventNames = [...]string{
	EventCQErr:            "CQ error",
	EventQPFatal:          "local work queue catastrophic error",
	EventQPReqErr:         "invalid request local work queue error",
	EventQPAccessErr:      "local access violation work queue error",
	EventCommEst:          "communication established",
	EventSQDrained:        "send queue drained",
	EventPathMig:          "path migrated",
	EventPathMigErr:       "path migration request error",
	EventDeviceFatal:      "local catastrophic error",
	EventPortActive:       "port active",
	EventPortErr:          "port error",
	EventLIDChange:        "LID change",
	EventPKeyChange:       "P_Key change",
	EventSMChange:         "SM change",
	EventSRQErr:           "SRQ catastrophic error",
	EventSRQLimitReached:  "SRQ limit reached",
	EventQPLastWQEReached: "last WQE reached",
	EventClientReregister: "client reregistration",
	EventGIDChange:        "GID table change",
	EventWQFatal:          "WQ fatal",
}

// String returns the text ibv_event_type_str gives.
func (t EventType) String() string {
	if int(t) < len(eventNames) && eventNames[t] != "" {
		return eventNames[t]
	}
	return "unknown"
}

// AsyncEvent is an asynchronous event (struct ibv_async_event). One of
// QP, SRQ, CQ and Port says what it is about, by its Type.
type AsyncEvent struct {
	Type EventType
	QP   *QP
	SRQ  *SRQ
	CQ   CQ  // a *cq.CQ
	Port int // port events
}

// String names the event and what it is about, e.g. "SRQ limit reached on SRQ 3".
func (e AsyncEvent) String() string {
	switch {
	case e.QP != nil:
		return fmt.Sprintf("%s on QP %d", e.Type, e.QP.Num())
	case e.SRQ != nil:
		return fmt.Sprintf("%s on SRQ %d", e.Type, e.SRQ.Num())
	case e.CQ != nil:
		return fmt.Sprintf("%s on CQ %d", e.Type, e.CQ.Handle())
	}
	return fmt.Sprintf("%s on port %d", e.Type, e.Port)
}

// AsyncEvent waits for the next asynchronous event of the device
// (ibv_get_async_event) until ctx ends; the event is acknowledged at once.
// Events of objects destroyed meanwhile are skipped.
func (c *Context) AsyncEvent(ctx context.Context) (AsyncEvent, error) {
	if c == nil {
		return AsyncEvent{}, ErrClosed
	}
	for {
		var d abi.AsyncEventDesc
		if err := c.core.Async.Read(ctx, ucmd.Bytes(&d)); err != nil {
			return AsyncEvent{}, fmt.Errorf("uverbs: async event: %w", err)
		}
		e := AsyncEvent{Type: EventType(d.EventType)}
		switch e.Type {
		case EventCQErr:
			e.CQ, _ = c.core.Lookup(d.Element).(CQ)
			if e.CQ == nil {
				continue
			}
		case EventQPFatal, EventQPReqErr, EventQPAccessErr, EventCommEst,
			EventSQDrained, EventPathMig, EventPathMigErr, EventQPLastWQEReached:
			if e.QP, _ = c.core.Lookup(d.Element).(*QP); e.QP == nil {
				continue
			}
		case EventSRQErr, EventSRQLimitReached:
			if e.SRQ, _ = c.core.Lookup(d.Element).(*SRQ); e.SRQ == nil {
				continue
			}
		default:
			e.Port = int(d.Element)
		}
		return e, nil
	}
}

// AsyncFd returns the file descriptor of the device's async event file,
// for poll(2)-style integration. It stays owned by the context.
func (c *Context) AsyncFd() int {
	if c == nil {
		return -1
	}
	return int(c.async.Fd())
}
