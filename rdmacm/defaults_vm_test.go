package rdmacm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// connectPair connects a client and a server with the given parameters
// (nil: librdmacm's defaults) and returns both IDs and the request event
// the server saw.
func connectPair(t *testing.T, d testenv.Dev, cp, sp *rdmacm.ConnParam) (c, s *rdmacm.ID, req *rdmacm.Event) {
	t.Helper()
	ctx := ctxT(t)
	l, addr := listen(t, d, rdmacm.TCP)
	c = dialer(t, addr, rdmacm.TCP, qpCap)
	if err := c.Connect(cp); err != nil {
		t.Fatal(err)
	}
	req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if err != nil {
		t.Fatal(err)
	}
	s = req.ID
	if err := s.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
		t.Fatal(err)
	}
	if err := s.Accept(sp); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		t.Fatal(err)
	}
	return c, s, req
}

// TestConnParamNil connects with nil parameters on both sides, as
// librdmacm's NULL: the request offers the device's maxima, the QPs get
// them (lowered by the accept to what was offered) and 7 transport and
// RNR retries, and an RDMA read completes, on rxe and siw.
func TestConnParamNil(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		c, s, req := connectPair(t, d, nil, nil)
		a, err := c.Context().QueryDevice()
		if err != nil {
			t.Fatal(err)
		}
		maxInit, maxResp := uint8(min(a.MaxQPInitRdAtom, 255)), uint8(min(a.MaxQPRdAtom, 255))
		t.Logf("%s: max_qp_init_rd_atom %d, max_qp_rd_atom %d; request event: ResponderResources %d, InitiatorDepth %d",
			d.Name, maxInit, maxResp, req.Param.ResponderResources, req.Param.InitiatorDepth)
		// Both sides run on the same device: the server accepts with
		// min(offer, its maxima), and the client's QP gets the server's.
		wantRd := min(maxInit, maxResp)
		for _, side := range []struct {
			name string
			qp   *uverbs.QP
		}{{"client", c.QP()}, {"server", s.QP()}} {
			q, err := side.qp.Query(uverbs.QPAttrMaxQPRdAtomic | uverbs.QPAttrMaxDestRdAtomic | uverbs.QPAttrRetryCnt | uverbs.QPAttrRNRRetry)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s QP: max_rd_atomic %d, max_dest_rd_atomic %d, retry_cnt %d, rnr_retry %d",
				side.name, q.MaxRdAtomic, q.MaxDestRdAtomic, q.RetryCnt, q.RNRRetry)
			if d.Driver == "siw" {
				// siw reports its IRD as max_rd_atomic and its ORD as
				// max_dest_rd_atomic (siw_query_qp), and iWARP has no
				// retry counts (TCP retransmits): both limits non-zero
				// and within the device's is what can be checked.
				if q.MaxRdAtomic == 0 || q.MaxDestRdAtomic == 0 || q.MaxRdAtomic > max(maxInit, maxResp) || q.MaxDestRdAtomic > max(maxInit, maxResp) {
					t.Errorf("%s QP read limits %d, %d; want both in 1..%d", side.name, q.MaxRdAtomic, q.MaxDestRdAtomic, max(maxInit, maxResp))
				}
				continue
			}
			if req.Param.ResponderResources != maxInit || req.Param.InitiatorDepth != maxResp {
				t.Errorf("request event ResponderResources %d, InitiatorDepth %d; want the client's initiator depth %d and responder resources %d (the server's view)",
					req.Param.ResponderResources, req.Param.InitiatorDepth, maxInit, maxResp)
			}
			if q.MaxRdAtomic != wantRd || q.MaxDestRdAtomic != wantRd || q.RetryCnt != 7 || q.RNRRetry != 7 {
				t.Errorf("%s QP: max_rd_atomic %d, max_dest_rd_atomic %d, retry_cnt %d, rnr_retry %d; want %d, %d, 7, 7",
					side.name, q.MaxRdAtomic, q.MaxDestRdAtomic, q.RetryCnt, q.RNRRetry, wantRd, wantRd)
			}
		}
		sbuf, sregion := memory(t, s.PD())
		copy(sbuf, "read me")
		cbuf, cregion := memory(t, c.PD())
		if err := c.PostRead(3, cregion, 0, 7, uverbs.SendSignaled, rdmacm.Remote{Addr: sregion.Addr(), RKey: sregion.RKey()}); err != nil {
			t.Fatal(err)
		}
		wc, err := c.GetSendComp(ctx)
		if err != nil || wc.Status != cq.Success || wc.ID != 3 {
			t.Fatalf("read completion %+v, %v", wc, err)
		}
		if string(cbuf[:7]) != "read me" {
			t.Errorf("read %q", cbuf[:7])
		}
		hangUp(t, c, s)
	})
}

// TestReadWithoutInitiatorDepth connects a client that asks for no RDMA
// reads (InitiatorDepth 0): its QP's max_rd_atomic is 0, and PostSend of
// a read or an atomic fails at once with an error that matches
// uverbs.ErrInvalid and names ConnParam.InitiatorDepth, instead of a read
// that never completes (rxe) — on rxe and siw. A write still works.
func TestReadWithoutInitiatorDepth(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		c, s, _ := connectPair(t, d, &rdmacm.ConnParam{ResponderResources: rdmacm.MaxResponderResources, RetryCount: 7, RNRRetryCount: 7}, nil)
		_, sregion := memory(t, s.PD())
		_, cregion := memory(t, c.PD())
		remote := rdmacm.Remote{Addr: sregion.Addr(), RKey: sregion.RKey()}
		err := c.PostRead(1, cregion, 0, 8, uverbs.SendSignaled, remote)
		if !errors.Is(err, uverbs.ErrInvalid) || !strings.Contains(err.Error(), "ConnParam.InitiatorDepth") {
			t.Errorf("read on a QP without initiator depth: %v; want an invalid-argument error naming ConnParam.InitiatorDepth", err)
		}
		sge := []uverbs.SGE{{Addr: cregion.Addr(), Length: 8, LKey: cregion.LKey()}}
		_, err = c.QP().PostSend([]uverbs.SendWR{{ID: 2, Opcode: uverbs.WRAtomicFetchAndAdd, SGE: sge, RemoteAddr: remote.Addr, RKey: remote.RKey, CompareAdd: 1, Flags: uverbs.SendSignaled}})
		if !errors.Is(err, uverbs.ErrInvalid) {
			t.Errorf("fetch-and-add on a QP without initiator depth: %v; want uverbs.ErrInvalid", err)
		}
		if err := c.PostWrite(3, cregion, 0, 8, uverbs.SendSignaled, remote); err != nil {
			t.Fatal(err)
		}
		if wc, err := c.GetSendComp(ctx); err != nil || wc.Status != cq.Success || wc.ID != 3 {
			t.Fatalf("write completion %+v, %v", wc, err)
		}
		hangUp(t, c, s)
	})
}
