package soak_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
)

// ledger accounts for the operations posted to one queue (a send queue
// or a receive queue): each must come back in exactly one completion.
// IDs are given out in posting order, so that a missing completion can be
// told apart from siw's stranded operations, which are always the last
// ones posted.
type ledger struct {
	name     string
	next     uint64
	base     uint64 // added to every ID, to tell the queues of a CQ apart
	inFlight map[uint64]opInfo
	done     map[uint64]doneInfo // the operations completed, to name a second completion
	maxDone  uint64              // the highest ID completed
	ok       int
	failed   map[cq.Status]int
	stranded int
	lost     []string // what went missing, or came back twice or unasked
	// siw makes doubleFlush true: its flush of a failed QP completes an
	// RDMA read twice when the read was both in the ORQ and the
	// transmitter's next request (see doubled), a kernel bug the
	// library cannot undo.
	doubleFlush bool
	doubled     int
	last        uint64 // the ID of the last completion
}

// doneInfo is a completed operation and how it completed.
type doneInfo struct {
	op     opInfo
	status cq.Status
}

// opInfo is what a posted operation was, for its completion's check.
type opInfo struct {
	kind opKind
	slot int
	unit uint64
}

type opKind uint8

const (
	opWrite opKind = iota
	opAtomicWrite
	opFlush
	opRead
	opSend
	opRecv
	opFetchAdd
	opCmpSwap
)

func (k opKind) String() string {
	return [...]string{"write", "atomic write", "flush", "read", "send", "recv", "fetch-add", "cmp-swap"}[k]
}

func newLedger(name string, base uint64) *ledger {
	return &ledger{name: name, base: base, inFlight: map[uint64]opInfo{}, done: map[uint64]doneInfo{}, failed: map[cq.Status]int{}}
}

// id returns the next operation's ID; it is not in flight until posted.
func (l *ledger) id() uint64 {
	l.next++
	return l.base + l.next
}

// posted records that the operation id is on the queue.
func (l *ledger) posted(id uint64, op opInfo) { l.inFlight[id] = op }

// complete takes the completion w off the ledger and returns what its
// operation was. A completion of no operation in flight (a duplicate, or
// one never posted) is lost: ok is false.
func (l *ledger) complete(w cq.WC) (op opInfo, ok bool) {
	last := l.last
	l.last = w.ID
	op, ok = l.inFlight[w.ID]
	if !ok {
		d, twice := l.done[w.ID]
		// siw's flush completes a read twice; only that shape is let
		// through (rpmatest.FlushedTwice).
		if twice && l.doubleFlush && last == w.ID && rpmatest.FlushedTwice(cq.WC{ID: w.ID, Status: d.status}, w) &&
			(d.op.kind == opRead || d.op.kind == opFlush) {
			l.doubled++
			return op, false
		}
		what := "never posted"
		if twice {
			what = fmt.Sprintf("%v of unit %d, completed already (%v)", d.op.kind, d.op.unit, d.status)
		}
		l.lost = append(l.lost, fmt.Sprintf("%s: completion %d (%v, opcode %v) of no operation in flight: %s",
			l.name, w.ID-l.base, w.Status, w.Opcode, what))
		return op, false
	}
	delete(l.inFlight, w.ID)
	l.done[w.ID] = doneInfo{op, w.Status}
	l.maxDone = max(l.maxDone, w.ID)
	if w.Status == cq.Success {
		l.ok++
	} else {
		l.failed[w.Status]++
	}
	return op, true
}

// settle ends the ledger once no completion comes any more: what is still
// in flight is stranded when strand allows it (siw after its QP failed)
// and every one of them was posted after the last completion that came;
// anything else still in flight is lost.
func (l *ledger) settle(strand bool) {
	if len(l.inFlight) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(l.inFlight))
	if strand && ids[0] > l.maxDone {
		l.stranded += len(ids)
	} else {
		for _, id := range ids {
			l.lost = append(l.lost, fmt.Sprintf("%s: %v %d (unit %d) never completed; %d did",
				l.name, l.inFlight[id].kind, id, l.inFlight[id].unit, l.maxDone))
		}
	}
	clear(l.inFlight)
}

// failures counts the failed completions.
func (l *ledger) failures() int {
	n := 0
	for _, c := range l.failed {
		n += c
	}
	return n
}

func TestLedger(t *testing.T) {
	post := func(l *ledger, n int) []uint64 {
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = l.id()
			l.posted(ids[i], opInfo{kind: opWrite})
		}
		return ids
	}
	t.Run("all complete", func(t *testing.T) {
		l := newLedger("sq", 0)
		for _, id := range post(l, 3) {
			l.complete(cq.WC{ID: id})
		}
		l.settle(false)
		if l.ok != 3 || len(l.lost) != 0 || l.stranded != 0 {
			t.Errorf("%+v", l)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		l := newLedger("sq", 0)
		ids := post(l, 1)
		l.complete(cq.WC{ID: ids[0]})
		if _, ok := l.complete(cq.WC{ID: ids[0]}); ok || len(l.lost) != 1 {
			t.Errorf("second completion accepted: %+v", l)
		}
	})
	t.Run("siw double flush", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			kind    opKind
			first   cq.Status
			between bool // another completion between the two
			siw     bool
			doubled bool
		}{
			{"read", opRead, cq.WRFlushErr, false, true, true},
			{"emulated flush", opFlush, cq.WRFlushErr, false, true, true},
			{"rxe", opRead, cq.WRFlushErr, false, false, false},
			{"write", opWrite, cq.WRFlushErr, false, true, false},
			{"first succeeded", opRead, cq.Success, false, true, false},
			{"not adjacent", opRead, cq.WRFlushErr, true, true, false},
		} {
			l := newLedger("sq", 0)
			l.doubleFlush = c.siw
			a, b := l.id(), l.id()
			l.posted(a, opInfo{kind: c.kind})
			l.posted(b, opInfo{kind: opWrite})
			l.complete(cq.WC{ID: a, Status: c.first})
			if c.between {
				l.complete(cq.WC{ID: b, Status: cq.WRFlushErr})
			}
			l.complete(cq.WC{ID: a, Status: cq.WRFlushErr})
			if got := l.doubled == 1 && len(l.lost) == 0; got != c.doubled {
				t.Errorf("%s: doubled %d, lost %q; want doubled %v", c.name, l.doubled, l.lost, c.doubled)
			}
		}
	})
	t.Run("stranded tail", func(t *testing.T) {
		l := newLedger("sq", 1<<63)
		ids := post(l, 4)
		l.complete(cq.WC{ID: ids[0]})
		l.complete(cq.WC{ID: ids[1], Status: cq.WRFlushErr})
		l.settle(true)
		if l.stranded != 2 || len(l.lost) != 0 || l.failures() != 1 {
			t.Errorf("%+v", l)
		}
	})
	t.Run("hole", func(t *testing.T) {
		l := newLedger("sq", 0)
		ids := post(l, 3)
		l.complete(cq.WC{ID: ids[0]})
		l.complete(cq.WC{ID: ids[2]})
		l.settle(true)
		if l.stranded != 0 || len(l.lost) != 1 {
			t.Errorf("a completion missing before a later one is not lost: %+v", l)
		}
	})
	t.Run("rxe never strands", func(t *testing.T) {
		l := newLedger("sq", 0)
		post(l, 2)
		l.settle(false)
		if len(l.lost) != 2 {
			t.Errorf("%+v", l)
		}
	})
}

func TestKernelLog(t *testing.T) {
	k := &kernelLog{fd: -1}
	k.add("6,100,5000,-;siw: device added\n")
	k.add("4,101,5001,-;refcount_t: underflow; use-after-free.\n")
	k.add("4,102,5002,c;Call Trace:\n SUBSYSTEM=x\n")
	k.add("2,103,5003,-;kernel BUG at lib/list_debug.c:54!\n")
	if k.msgs != 4 || k.defects() != 2 || len(k.bad) != 3 || k.bad[1] != "  Call Trace:" {
		t.Errorf("%d messages, %d defects: %q", k.msgs, k.defects(), k.bad)
	}
}
