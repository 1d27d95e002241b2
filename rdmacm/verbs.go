package rdmacm

import (
	"context"
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// The rdma_verbs.h helpers: one request on the ID's QP, addressed by a
// region and a range in it, and blocking completion retrieval on the CQs
// CreateQP made.

// sge returns the SGE for n bytes at off of m, checking the range.
func sge(m *mr.MR, off, n int) (uverbs.SGE, error) {
	// n > Len-off, not off+n > Len: the sum of two large ints wraps.
	if m == nil || off < 0 || n < 0 || off > m.Len() || n > m.Len()-off {
		return uverbs.SGE{}, fmt.Errorf("rdmacm: range [%d, %d+%d) outside the region: %w", off, off, n, uverbs.ErrInvalid)
	}
	return uverbs.SGE{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.LKey()}, nil
}

func (id *ID) needQP() error {
	if err := id.alive(); err != nil {
		return err
	}
	if id.qp == nil {
		return fmt.Errorf("rdmacm: the ID has no QP (CreateQP): %w", uverbs.ErrInvalid)
	}
	return nil
}

// PostRecv posts a receive of up to length bytes at off of m
// (rdma_post_recv). wrID comes back as the completion's ID. The buffer
// must stay registered until the receive completes.
func (id *ID) PostRecv(wrID uint64, m *mr.MR, off, length int) error {
	if id == nil {
		return ErrClosed
	}
	if err := id.needQP(); err != nil {
		return err
	}
	s, err := sge(m, off, length)
	if err != nil {
		return err
	}
	_, err = id.qp.PostRecv([]uverbs.RecvWR{{ID: wrID, SGE: []uverbs.SGE{s}}})
	return err
}

// PostSend posts a send of length bytes at off of m (rdma_post_send).
// With uverbs.SendInline in flags the bytes are copied at once and their
// registration is not used.
func (id *ID) PostSend(wrID uint64, m *mr.MR, off, length int, flags uverbs.SendFlags) error {
	if id == nil {
		return ErrClosed
	}
	return id.post(uverbs.SendWR{ID: wrID, Opcode: uverbs.WRSend, Flags: flags}, m, off, length)
}

// Remote is memory of the peer's that an RDMA read or write reaches: its
// address and the rkey of its registration, as the peer announced them
// (rdma_post_read's and rdma_post_write's remote_addr and rkey). Its
// fields are in the order a peer usually sends them, so binary.Decode of
// 12 bytes fills it.
type Remote struct {
	Addr uint64
	RKey uint32
}

// PostRead posts an RDMA read of length bytes from the peer's memory at
// from into off of m (rdma_post_read).
func (id *ID) PostRead(wrID uint64, m *mr.MR, off, length int, flags uverbs.SendFlags, from Remote) error {
	if id == nil {
		return ErrClosed
	}
	return id.post(uverbs.SendWR{ID: wrID, Opcode: uverbs.WRRDMARead, Flags: flags, RemoteAddr: from.Addr, RKey: from.RKey}, m, off, length)
}

// PostWrite posts an RDMA write of length bytes at off of m to the peer's
// memory at to (rdma_post_write).
func (id *ID) PostWrite(wrID uint64, m *mr.MR, off, length int, flags uverbs.SendFlags, to Remote) error {
	if id == nil {
		return ErrClosed
	}
	return id.post(uverbs.SendWR{ID: wrID, Opcode: uverbs.WRRDMAWrite, Flags: flags, RemoteAddr: to.Addr, RKey: to.RKey}, m, off, length)
}

func (id *ID) post(wr uverbs.SendWR, m *mr.MR, off, length int) error {
	if err := id.needQP(); err != nil {
		return err
	}
	s, err := sge(m, off, length)
	if err != nil {
		return err
	}
	wr.SGE = []uverbs.SGE{s}
	_, err = id.qp.PostSend([]uverbs.SendWR{wr})
	return err
}

// GetSendComp returns the next completion of the ID's send CQ, waiting on
// its channel until there is one or ctx ends (rdma_get_send_comp). Like
// the C function it suits IDs whose CQs CreateQP made: not shared with
// other IDs, and separate for sends and receives.
//
// Unlike the C function it notices a connection that ended: once the
// peer disconnected or died (see ErrDisconnected), it returns the
// completions the CQ still holds, then an error matching ErrDisconnected
// (and syscall.ECONNRESET) instead of sleeping. Work requests still
// posted are flushed, as completions with an error status, only when the
// QP moves to the error state: Disconnect (or Close) does that, and the
// flushed completions that reach the CQ before a call come out before its
// ErrDisconnected. The disconnection event itself stays for WaitEvent.
// While it sleeps it watches the ID's event channel (see WaitCQ); a peer
// whose host vanishes without a disconnection is noticed only when the
// transport gives up (see the package documentation).
func (id *ID) GetSendComp(ctx context.Context) (cq.WC, error) {
	if id == nil {
		return cq.WC{}, ErrClosed
	}
	if err := id.alive(); err != nil {
		return cq.WC{}, err
	}
	return id.getComp(ctx, id.own.send, id.own.sendCh)
}

// GetRecvComp returns the next completion of the ID's receive CQ,
// waiting until there is one or ctx ends (rdma_get_recv_comp); see
// GetSendComp, also for a connection that ended.
func (id *ID) GetRecvComp(ctx context.Context) (cq.WC, error) {
	if id == nil {
		return cq.WC{}, ErrClosed
	}
	if err := id.alive(); err != nil {
		return cq.WC{}, err
	}
	return id.getComp(ctx, id.own.recv, id.own.recvCh)
}

// getComp polls; when the CQ is empty it arms it, polls once more (a
// completion may have slipped in before the arm) and sleeps on the
// channel, as rdma_get_*_comp do, but also on the connection's end.
// A completion found wins over the end, so that none is lost.
func (id *ID) getComp(ctx context.Context, q *cq.CQ, ch *cq.Channel) (cq.WC, error) {
	var wc [1]cq.WC
	if q == nil || ch == nil {
		return cq.WC{}, fmt.Errorf("rdmacm: the ID has no CQs of its own (CreateQP without CQs): %w", uverbs.ErrInvalid)
	}
	for {
		n, err := q.Poll(wc[:])
		if err != nil || n == 1 {
			return wc[0], err
		}
		if err := q.ReqNotify(false); err != nil {
			return cq.WC{}, err
		}
		if n, err = q.Poll(wc[:]); err != nil || n == 1 {
			return wc[0], err
		}
		if id.isGone() {
			return cq.WC{}, errDisconnected
		}
		if _, err := id.WaitCQ(ctx, ch); err != nil && !errors.Is(err, ErrDisconnected) {
			return cq.WC{}, err
		}
		// On ErrDisconnected, poll once more: the completions first.
	}
}
