package siw

import (
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/conformance"
)

// The tests make queues as uverbs does (see package conformance): through
// the driver's context and both halves of each create; init is what the
// caller asked for and also what the kernel granted.

func createCQ(dev provider.Device, resp []byte) (provider.CQ, error) {
	return conformance.CreateCQ(driver{}, dev, resp)
}

func createQP(dev provider.Device, init provider.QPInit, resp []byte) (provider.SQ, provider.RQ, error) {
	q, err := conformance.CreateQP(driver{}, dev, init, resp)
	return q.SQ, q.RQ, err
}

func createSRQ(dev provider.Device, init provider.SRQInit, resp []byte) (provider.RQ, error) {
	return conformance.CreateSRQ(driver{}, dev, init, resp)
}

// TestFirstHalves checks that the first halves ask for what the caller
// asked and that Abort releases nothing: siw sends no driver data with a
// create and the kernel allocates the rings. siw has no address handles.
func TestFirstHalves(t *testing.T) {
	dev := newFakeDevice()
	ctx, err := driver{}.NewContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	cqInit := provider.CQInit{CQE: 100}
	pc, err := ctx.CreateCQ(&cqInit, nil)
	if err != nil || cqInit != (provider.CQInit{CQE: 100}) {
		t.Fatalf("CreateCQ = %v, init %+v", err, cqInit)
	}
	pc.Abort()
	want := provider.QPInit{Type: abi.IB_UVERBS_QPT_RC, MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 2, MaxRecvSGE: 2, SigAll: true}
	qpInit := want
	pq, err := ctx.CreateQP(&qpInit, nil)
	if err != nil || qpInit != want {
		t.Fatalf("CreateQP = %v, init %+v; want %+v", err, qpInit, want)
	}
	pq.Abort()
	srqInit := provider.SRQInit{MaxWR: 10, MaxSGE: 2, Limit: 1}
	ps, err := ctx.CreateSRQ(&srqInit, nil)
	if err != nil || srqInit != (provider.SRQInit{MaxWR: 10, MaxSGE: 2, Limit: 1}) {
		t.Fatalf("CreateSRQ = %v, init %+v", err, srqInit)
	}
	ps.Abort()
	if len(dev.maps) != 0 || dev.unmapped != 0 {
		t.Errorf("the first halves and Abort mapped %d and unmapped %d queues, want 0", len(dev.maps), dev.unmapped)
	}
	if _, err := ctx.NewAH(&provider.AHAttr{}, nil); !errors.Is(err, provider.ErrUnsupported) {
		t.Errorf("NewAH = %v, want ErrUnsupported", err)
	}
	if err := ctx.Opened(make([]byte, allocCtxRespSize)); err != nil {
		t.Errorf("Opened = %v", err)
	}
	if err := ctx.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
