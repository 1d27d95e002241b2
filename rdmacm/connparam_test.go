package rdmacm

import (
	"errors"
	"testing"

	"github.com/purerdma/purerdma/uverbs"
)

// TestWireParam checks what Connect and Accept send for nil, zero, Max
// and explicit parameters, given the device's maxima (rxe's 128 and 128
// here, a smaller device's 16 and 8) and a request's values, against
// librdmacm's rdma_connect, rdma_accept and ucma_copy_conn_param_to_kern.
func TestWireParam(t *testing.T) {
	rxe := rdLimits{resp: 128, init: 128}
	small := rdLimits{resp: 16, init: 8}
	maxed := &ConnParam{ResponderResources: MaxResponderResources, InitiatorDepth: MaxInitiatorDepth, RetryCount: 7, RNRRetryCount: 7}
	for _, c := range []struct {
		name        string
		p           *ConnParam
		dev         rdLimits
		req         *rdLimits
		want        rdLimits
		retry, rnr  uint8
		wantInvalid bool
	}{
		{name: "connect nil", dev: rxe, want: rxe, retry: 7, rnr: 7},
		{name: "connect nil small", dev: small, want: small, retry: 7, rnr: 7},
		{name: "connect zero", p: &ConnParam{}, dev: rxe},
		{name: "connect max", p: maxed, dev: small, want: small, retry: 7, rnr: 7},
		{name: "connect explicit", p: &ConnParam{ResponderResources: 4, InitiatorDepth: 1, RetryCount: 3, RNRRetryCount: 5}, dev: small,
			want: rdLimits{resp: 4, init: 1}, retry: 3, rnr: 5},
		{name: "connect depth above device", p: &ConnParam{InitiatorDepth: 9}, dev: small, wantInvalid: true},
		{name: "connect resources above device", p: &ConnParam{ResponderResources: 17}, dev: small, wantInvalid: true},
		{name: "accept nil", dev: rxe, req: &rdLimits{resp: 1, init: 4}, want: rdLimits{resp: 1, init: 4}, retry: 7, rnr: 7},
		{name: "accept nil clamped", dev: small, req: &rdLimits{resp: 128, init: 128}, want: small, retry: 7, rnr: 7},
		{name: "accept nil request of none", dev: rxe, req: &rdLimits{}, want: rdLimits{}, retry: 7, rnr: 7},
		{name: "accept max", p: maxed, dev: small, req: &rdLimits{resp: 2, init: 100}, want: rdLimits{resp: 2, init: 8}, retry: 7, rnr: 7},
		{name: "accept zero", p: &ConnParam{PrivateData: []byte("x")}, dev: rxe, req: &rdLimits{resp: 5, init: 5}},
		{name: "accept explicit above request", p: &ConnParam{ResponderResources: 8, InitiatorDepth: 8}, dev: small, req: &rdLimits{resp: 1, init: 1},
			want: rdLimits{resp: 8, init: 8}},
		{name: "accept above device", p: &ConnParam{InitiatorDepth: 9}, dev: small, req: &rdLimits{}, wantInvalid: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, retry, rnr, err := wireParam(c.p, c.dev, c.req)
			if c.wantInvalid {
				if !errors.Is(err, uverbs.ErrInvalid) {
					t.Fatalf("err %v, want one matching uverbs.ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || retry != c.retry || rnr != c.rnr {
				t.Errorf("limits %+v, retries %d, %d; want %+v, %d, %d", got, retry, rnr, c.want, c.retry, c.rnr)
			}
		})
	}
}

// TestConnParamWire checks that the wire form carries wireParam's values
// and not the caller's Max constants.
func TestConnParamWire(t *testing.T) {
	p := &ConnParam{ResponderResources: MaxResponderResources, InitiatorDepth: MaxInitiatorDepth, FlowControl: 1, QPNum: 9}
	lim, retry, rnr, err := wireParam(p, rdLimits{resp: 16, init: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := (&ID{}).connParam(p, lim, retry, rnr)
	if k.ResponderResources != 16 || k.InitiatorDepth != 8 || k.FlowControl != 1 || k.QPNum != 9 || k.Valid != 1 {
		t.Errorf("wire param %+v", k)
	}
}
