package rdmacm

import (
	"fmt"
	"sync"

	"github.com/purerdma/purerdma/uverbs"
)

// MaxInitiatorDepth and MaxResponderResources (librdmacm's
// RDMA_MAX_INIT_DEPTH and RDMA_MAX_RESP_RES) in ConnParam.InitiatorDepth
// and .ResponderResources ask for the most the device allows: its
// max_qp_init_rd_atom and max_qp_rd_atom for Connect, and for Accept the
// same, lowered to what the connection request offers. A nil ConnParam
// asks for both.
const (
	MaxInitiatorDepth     uint8 = 0xFF
	MaxResponderResources uint8 = 0xFF
)

// rdLimits are the read and atomic limits of one side of a connection,
// seen from that side: resp how many the peer may have outstanding
// towards it (responder resources, the QP's max_dest_rd_atomic), init how
// many it may have towards the peer (initiator depth, max_rd_atomic).
type rdLimits struct{ resp, init uint8 }

// wireParam is what Connect (req nil) or Accept (req the connection
// request's values, in the accepting side's view) send and set on the
// QP, as librdmacm's rdma_connect, rdma_accept and
// ucma_copy_conn_param_to_kern compute it: a nil p or a Max constant
// takes the device's maximum, which Accept lowers to the request's
// value; other values must not exceed the device's maximum
// (ucma_valid_param) and are sent as they are. A nil p sends 7
// transport and 7 RNR retries, a non-nil p its own counts.
func wireParam(p *ConnParam, dev rdLimits, req *rdLimits) (lim rdLimits, retry, rnr uint8, err error) {
	pick := func(v uint8, set bool, max, asked uint8, name, devName string) (uint8, error) {
		if set && v != 0xFF {
			if v > max {
				return 0, fmt.Errorf("rdmacm: ConnParam.%s %d exceeds the device's %s %d (%d or nil: the maximum): %w",
					name, v, devName, max, 0xFF, uverbs.ErrInvalid)
			}
			return v, nil
		}
		if req != nil {
			return min(asked, max), nil
		}
		return max, nil
	}
	var r rdLimits
	if req != nil {
		r = *req
	}
	if lim.resp, err = pick(paramOr(p).ResponderResources, p != nil, dev.resp, r.resp, "ResponderResources", "max_qp_rd_atom"); err != nil {
		return rdLimits{}, 0, 0, err
	}
	if lim.init, err = pick(paramOr(p).InitiatorDepth, p != nil, dev.init, r.init, "InitiatorDepth", "max_qp_init_rd_atom"); err != nil {
		return rdLimits{}, 0, 0, err
	}
	if p == nil {
		return lim, 7, 7, nil
	}
	return lim, p.RetryCount, p.RNRRetryCount, nil
}

func paramOr(p *ConnParam) *ConnParam {
	if p == nil {
		return &ConnParam{}
	}
	return p
}

// devLimits holds a device's read and atomic maxima, queried once.
type devLimits struct {
	once sync.Once
	lim  rdLimits
	err  error
}

// limits returns the maxima of the device the ID is bound to.
func (id *ID) limits() (rdLimits, error) {
	id.mu.Lock()
	d, closed := id.dev, id.closed
	id.mu.Unlock()
	if closed {
		return rdLimits{}, ErrClosed
	}
	if d == nil {
		return rdLimits{}, fmt.Errorf("rdmacm: the ID is not bound to a device: %w", uverbs.ErrInvalid)
	}
	d.rd.once.Do(func() {
		a, err := d.ctx.QueryDevice()
		if err != nil {
			d.rd.err = fmt.Errorf("rdmacm: query device: %w", err)
			return
		}
		d.rd.lim = rdLimits{resp: uint8(min(max(a.MaxQPRdAtom, 0), 0xFF)), init: uint8(min(max(a.MaxQPInitRdAtom, 0), 0xFF))}
	})
	return d.rd.lim, d.rd.err
}
