package uverbs_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/internal/verbstest"
	"github.com/purerdma/purerdma/uverbs"
)

// TestConnectRC connects two RC QPs on rxe with Init and ConnectRC, each
// side with a PSN of its own (rcPair uses one for both, which would hide
// DestPSN and PSN swapped), checks what the kernel then reports, and
// moves an RDMA read and a send over the connection. iWARP QPs connect
// only through rdma_cm, so this runs on rxe alone.
func TestConnectRC(t *testing.T) {
	d := testenv.RoCE(t)
	r := newRig(t, d)
	a, b := r.qp(t, uverbs.RC, nil), r.qp(t, uverbs.RC, nil)
	gids, err := r.ctx.GIDTable(1)
	if err != nil {
		t.Fatal(err)
	}
	var gid uverbs.GID
	for _, e := range gids {
		if e.Index == r.gid {
			gid = e.GID
		}
	}
	const psnA, psnB = 0x123456, 0xabcdef
	path := func(destQPN, destPSN, psn uint32) uverbs.RCPath {
		// HopLimit left 0: ConnectRC passes 1, which on RoCE the kernel
		// replaces with the IP route's hop limit (see want below).
		return uverbs.RCPath{Port: 1, MTU: uverbs.MTU1024, Global: true, DGID: gid, SGIDIndex: uint8(r.gid),
			DestQPN: destQPN, DestPSN: destPSN, PSN: psn, RdAtomic: 2}
	}
	for _, s := range []struct {
		qp   *uverbs.QP
		path uverbs.RCPath
	}{
		{a, path(b.Num(), psnB, psnA)},
		{b, path(a.Num(), psnA, psnB)},
	} {
		if err := s.qp.Init(1, rigAccess); err != nil {
			t.Fatalf("QP %d Init: %v", s.qp.Num(), err)
		}
		// A receive posted in INIT, before the peer connects: what
		// Init is for.
		if _, err := s.qp.PostRecv([]uverbs.RecvWR{{ID: 100 + uint64(s.qp.Num()), SGE: []uverbs.SGE{r.sge(4096, 64)}}}); err != nil {
			t.Fatalf("PostRecv in INIT: %v", err)
		}
		if err := s.qp.ConnectRC(s.path); err != nil {
			t.Fatalf("QP %d ConnectRC: %v", s.qp.Num(), err)
		}
	}

	got, err := a.Query(uverbs.QPAttrState | uverbs.QPAttrAV | uverbs.QPAttrPathMTU | uverbs.QPAttrDestQPN |
		uverbs.QPAttrRQPSN | uverbs.QPAttrSQPSN | uverbs.QPAttrTimeout | uverbs.QPAttrRetryCnt |
		uverbs.QPAttrRNRRetry | uverbs.QPAttrMinRNRTimer | uverbs.QPAttrMaxQPRdAtomic | uverbs.QPAttrMaxDestRdAtomic)
	if err != nil {
		t.Fatal(err)
	}
	type attrs struct {
		State                        uverbs.QPState
		MTU                          uverbs.MTU
		DestQPN, RQPSN, SQPSN        uint32
		Timeout, RetryCnt, RNRRetry  uint8
		MinRNRTimer                  uint8
		MaxRdAtomic, MaxDestRdAtomic uint8
		Global                       bool
		DGID                         uverbs.GID
		HopLimit                     uint8
	}
	// The hop limit is the route's, not ours: on RoCE the kernel resolves
	// the peer's MAC address when the QP goes to RTR and sets the hop
	// limit from the IP route (ib_resolve_eth_dmac), Linux's default TTL
	// of 64 on the VM's veth.
	want := attrs{uverbs.QPSRTS, uverbs.MTU1024, b.Num(), psnB, psnA, 14, 7, 7, 12, 2, 2, true, gid, 64}
	have := attrs{got.State, got.PathMTU, got.DestQPNum, got.RQPSN, got.SQPSN, got.Timeout, got.RetryCnt, got.RNRRetry,
		got.MinRNRTimer, got.MaxRdAtomic, got.MaxDestRdAtomic, got.AH.IsGlobal, got.AH.GRH.DGID, got.AH.GRH.HopLimit}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("A's attributes after ConnectRC (-want +got):\n%s", diff)
	}

	copy(r.buf[8192:], "read me")
	copy(r.buf[0:], "sent")
	if _, err := a.PostSend([]uverbs.SendWR{
		{ID: 1, Opcode: uverbs.WRRDMARead, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{r.sge(12288, 7)},
			RemoteAddr: r.mr.Addr() + 8192, RKey: r.mr.RKey()},
		{ID: 2, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{r.sge(0, 4)}},
	}); err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]bool{}
	for _, wc := range r.poll(t, 3) {
		if err := wc.Err(); err != nil {
			t.Errorf("completion %d: %v", wc.ID, err)
		}
		ids[wc.ID] = true
	}
	if want := map[uint64]bool{1: true, 2: true, 100 + uint64(b.Num()): true}; !cmp.Equal(ids, want) {
		t.Errorf("completions %v, want %v", ids, want)
	}
	verbstest.WantBytes(t, r.buf[12288:12288+7], "read me")
	verbstest.WantBytes(t, r.buf[4096:4096+4], "sent")
}

// TestConnectRCErrors: ConnectRC refuses what is not an RC QP before any
// system call, says which state a QP that cannot move did not reach, and
// keeps the error of Modify underneath. On rxe: siw has no UD QPs, and
// its modify does not check transitions the way the IB core's helper does.
func TestConnectRCErrors(t *testing.T) {
	r := newRig(t, testenv.RoCE(t))
	closed := r.qp(t, uverbs.RC, nil)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		qp        *uverbs.QP
		wantErr   error
		wantState uverbs.QPState // of the *TransitionError, if any
	}{
		{"nil", nil, uverbs.ErrClosed, 0},
		{"closed", closed, uverbs.ErrClosed, 0},
		{"UD", r.qp(t, uverbs.UD, nil), uverbs.ErrInvalid, 0},
		// RESET to RTR skips INIT: the kernel's EINVAL.
		{"not in INIT", r.qp(t, uverbs.RC, nil), uverbs.ErrInvalid, uverbs.QPSRTR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.qp.ConnectRC(uverbs.RCPath{Port: 1, MTU: uverbs.MTU1024, DestQPN: 1})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ConnectRC = %v, want %v", err, tt.wantErr)
			}
			var state uverbs.QPState
			if te, ok := errors.AsType[*uverbs.TransitionError](err); ok {
				state = te.State
			}
			if state != tt.wantState {
				t.Errorf("ConnectRC = %v: transition to %s, want %s", err, state, tt.wantState)
			}
		})
	}
}
