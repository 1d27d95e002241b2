package rdmacm

import (
	"errors"
	"syscall"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// decode turns the kernel's event into an Event, doing what librdmacm
// does on the way: a connection request gets a new ID bound to its
// device, a resolved address binds its ID to its device, and a connect
// response of the active side drives its QP to RTS and completes the
// handshake (the event becomes EventEstablished). It returns nil for the
// event of an ID destroyed meanwhile.
func (ch *EventChannel) decode(r *abi.UcmEventResp) (*Event, error) {
	owner := ch.lookup(r.UID)
	if owner == nil {
		return nil, nil
	}
	e := &Event{Type: EventType(r.Event), Status: int(int32(r.Status)), ID: owner}
	e.Param = decodeParam(owner.ps, r.Param[:])
	switch e.Type {
	case EventConnectRequest:
		id := &ID{ch: ch, handle: r.ID, ps: owner.ps,
			req: rdLimits{resp: e.Param.ResponderResources, init: e.Param.InitiatorDepth}}
		if err := ch.register(id); err != nil {
			return nil, err
		}
		e.ID, e.Listener = id, owner
		if err := id.bindDevice(); err != nil {
			// Nobody can accept it: refuse it rather than leave the peer
			// waiting for a timeout.
			id.Reject(nil)
			id.Close()
			return nil, err
		}
	case EventAddrResolved:
		if err := owner.bindDevice(); err != nil {
			e.fail(EventAddrError, err)
		}
	case EventMulticastJoin:
		if err := owner.joinedEvent(&e.Param); err != nil {
			e.fail(EventMulticastError, err)
		}
	case EventConnectResponse:
		if owner.qp != nil {
			if err := owner.completeConnect(&e.Param); err != nil {
				owner.Reject(nil)
				e.fail(EventConnectError, err)
			} else {
				e.Type = EventEstablished
			}
		}
	case EventDisconnected, EventDeviceRemoval:
		// Marked as it is read, whoever reads it, so that every
		// completion wait on the ID ends (WaitCQ).
		owner.markGone()
	}
	return e, nil
}

// decodeParam reads the param union of an event: struct rdma_ucm_conn_param
// for connected port spaces, struct rdma_ucm_ud_param for UDP.
func decodeParam(ps PortSpace, b []byte) ConnParam {
	if ps == UDP {
		var p abi.UcmUDParam
		copy(ucmd.Bytes(&p), b)
		return ConnParam{QPNum: p.QPNum, QKey: p.QKey, AH: ahAttr(&p.AHAttr), PrivateData: clone(p.PrivateData[:p.PrivateDataLen])}
	}
	var p abi.UcmConnParam
	copy(ucmd.Bytes(&p), b)
	return ConnParam{
		QPNum:              p.QPNum,
		PrivateData:        clone(p.PrivateData[:p.PrivateDataLen]),
		ResponderResources: p.ResponderResources,
		InitiatorDepth:     p.InitiatorDepth,
		FlowControl:        p.FlowControl,
		RetryCount:         p.RetryCount,
		RNRRetryCount:      p.RNRRetryCount,
		SRQ:                p.SRQ != 0,
	}
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// fail makes e an event of type typ that failed here rather than in the
// kernel, with err. Err returns err itself, with its text and everything
// it matches, rather than an errno squeezed out of it; Status still gets
// the negative errno librdmacm's event would carry (EIO when err has
// none), for callers that print it as C does.
func (e *Event) fail(typ EventType, err error) {
	e.Type, e.err = typ, err
	e.Status = -int(syscall.EIO)
	var en syscall.Errno
	if errors.As(err, &en) {
		e.Status = -int(en)
	}
}
