package uverbs

import (
	"os"
	"slices"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/verbs"
)

// stateSQ is a send queue with provider.StateTracker that records each
// Modified and whether both of the QP's locks were held then.
type stateSQ struct {
	provider.SQ
	qp     *QP
	states []uint32
	locked []bool
}

func (s *stateSQ) Modified(state uint32) {
	s.states = append(s.states, state)
	held := true
	for _, mu := range []interface {
		TryLock() bool
		Unlock()
	}{&s.qp.sendMu, &s.qp.recvMu} {
		if mu.TryLock() {
			mu.Unlock()
			held = false
		}
	}
	s.locked = append(s.locked, held)
}

// TestModifiedHook checks that Modify tells a driver with
// provider.StateTracker each state it sets, under both QP locks, and
// nothing for a modify without a state or on a closed QP. The command file
// is a pipe, which takes the MODIFY_QP write as a kernel that accepts it.
func TestModifiedHook(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	core, err := verbs.NewContext("fake0", w, abi.RDMA_DRIVER_UNKNOWN)
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	qp := &QP{core: core, handle: 3}
	sq := &stateSQ{qp: qp}
	qp.setSQ(sq)
	steps := []struct {
		attr QPAttr
		mask QPAttrMask
	}{
		{QPAttr{State: QPSInit, Port: 1}, QPAttrState | QPAttrPort},
		{QPAttr{QKey: 5}, QPAttrQKey}, // no state: no call
		{QPAttr{State: QPSRTR}, QPAttrState},
		{QPAttr{State: QPSRTS}, QPAttrState},
		{QPAttr{State: QPSReset}, QPAttrState},
	}
	for _, s := range steps {
		if err := qp.Modify(&s.attr, s.mask); err != nil {
			t.Fatalf("Modify(%+v, %#x): %v", s.attr, s.mask, err)
		}
	}
	want := []uint32{abi.IB_QPS_INIT, abi.IB_QPS_RTR, abi.IB_QPS_RTS, abi.IB_QPS_RESET}
	if !slices.Equal(sq.states, want) {
		t.Errorf("Modified with %v, want %v", sq.states, want)
	}
	if slices.Contains(sq.locked, false) {
		t.Errorf("locks held at each Modified: %v, want all", sq.locked)
	}
	// Closed between the command and the hook: the queues are gone.
	qp.closed.Store(true)
	qp.modified(abi.IB_QPS_ERR)
	if len(sq.states) != len(want) {
		t.Errorf("Modified on a closed QP: %v", sq.states)
	}
}
