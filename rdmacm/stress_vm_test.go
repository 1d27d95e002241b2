package rdmacm_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// The ring stress test: for stressFor, stressSenders goroutines post sends
// on one QP while others poll both CQs and repost receives on the peer's
// QP, all at full speed. QP.PostSend, QP.PostRecv and CQ.Poll promise to
// be safe from several goroutines, so the rings see concurrent producers
// and consumers on both sides. Every completion is accounted for: each
// send's wr_id and byte_len come back exactly once on the send CQ, and
// each message arrives exactly once, with the length and bytes it was
// sent with, on the receive CQ. See docs/memory-ordering.md for what the
// rings rely on.
const (
	stressFor      = 3 * time.Second
	stressSenders  = 4
	stressPollers  = 2 // per CQ
	stressPosters  = 2 // receive reposting goroutines
	stressDepth    = 16
	stressSlot     = 256 // bytes per send and receive buffer
	stressHdr      = 8   // the send's wr_id at the start of each message
	stressBatchMax = 3   // work requests per PostSend call
	// stressDrain bounds the wait for the last completions after the
	// senders stop; they normally take milliseconds.
	stressDrain = 30 * time.Second
)

var stressCap = uverbs.QPCap{MaxSendWR: stressDepth, MaxRecvWR: stressDepth, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 32}

// stressID is a send's wr_id: the sending goroutine, the send buffer slot
// and the goroutine's sequence number.
func stressID(g, slot int, seq uint64) uint64 { return uint64(g)<<56 | uint64(slot)<<48 | seq }

func splitStressID(id uint64) (g, slot int, seq uint64) {
	return int(id >> 56), int(id >> 48 & 0xff), id & (1<<48 - 1)
}

// stressLen is the length of a message, from the header to the slot size.
func stressLen(g int, seq uint64) int {
	return stressHdr + int((uint64(g)*131+seq*61)%(stressSlot-stressHdr+1))
}

// stressByte is byte i of a message after its header.
func stressByte(id uint64, i int) byte { return byte(id>>48) ^ byte(id) ^ byte(i) }

// stressLedger counts each wr_id seen, per sending goroutine.
type stressLedger struct {
	mu   sync.Mutex
	seen [stressSenders]map[uint64]int
}

func (l *stressLedger) add(g int, seq uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[g] == nil {
		l.seen[g] = map[uint64]int{}
	}
	l.seen[g][seq]++
	return l.seen[g][seq]
}

// check returns what differs from each goroutine's sends 0..sent[g]-1
// seen once each.
func (l *stressLedger) check(what string, sent []uint64) []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for g := range sent {
		for seq, n := range l.seen[g] {
			if seq >= sent[g] || n != 1 {
				errs = append(errs, fmt.Errorf("%s: goroutine %d seq %d seen %d times (it sent %d)", what, g, seq, n, sent[g]))
			}
		}
		if uint64(len(l.seen[g])) != sent[g] {
			errs = append(errs, fmt.Errorf("%s: goroutine %d: %d of its %d sends seen", what, g, len(l.seen[g]), sent[g]))
		}
	}
	return errs
}

// stress is one run on a connected pair: a sends, b receives.
type stress struct {
	a, b       *rdmacm.ID
	sbuf, rbuf []byte
	smr, rmr   *mr.MR

	ctx     context.Context
	fail    func(error)
	credits chan struct{} // receives posted and not yet matched by a send
	slots   chan int      // free send buffer slots
	free    chan int      // receive slots to post again

	sendBusy, recvBusy [stressDepth]atomic.Bool
	sent               [stressSenders]atomic.Uint64
	sendsDone          atomic.Bool
	sends, recvs       stressLedger
	sendN, recvN       atomic.Uint64 // completions polled
}

func TestRingStress(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		a, b := connected(t, d, stressCap, 1)
		t.Cleanup(func() { hangUp(t, a, b) })
		s := &stress{a: a, b: b,
			credits: make(chan struct{}, stressDepth),
			slots:   make(chan int, stressDepth),
			free:    make(chan int, stressDepth),
		}
		s.sbuf, s.smr = memory(t, a.PD())
		s.rbuf, s.rmr = memory(t, b.PD())
		if len(s.sbuf) < stressDepth*stressSlot || len(s.rbuf) < stressDepth*stressSlot {
			t.Fatalf("buffers of %d and %d bytes, need %d", len(s.sbuf), len(s.rbuf), stressDepth*stressSlot)
		}
		s.run(t)
	})
}

func (s *stress) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.ctx = ctx
	var once sync.Once
	s.fail = func(err error) {
		once.Do(cancel)
		t.Error(err)
	}
	for i := range stressDepth {
		s.slots <- i
		s.free <- i
	}

	var posters, senders, pollers sync.WaitGroup
	for range stressPosters {
		posters.Go(s.repost)
	}
	deadline := time.Now().Add(stressFor)
	for g := range stressSenders {
		senders.Go(func() { s.send(g, deadline) })
	}
	for range stressPollers {
		pollers.Go(func() { s.poll(s.a.SendCQ(), &s.sendN, s.sendDone) })
		pollers.Go(func() { s.poll(s.b.RecvCQ(), &s.recvN, s.recvDone) })
	}
	senders.Wait()
	s.sendsDone.Store(true)
	pollers.Wait()
	cancel()
	posters.Wait()

	sent := make([]uint64, stressSenders)
	var total uint64
	for g := range sent {
		sent[g] = s.sent[g].Load()
		total += sent[g]
		if sent[g] == 0 {
			t.Errorf("goroutine %d posted nothing in %v", g, stressFor)
		}
	}
	for _, err := range append(s.sends.check("send completions", sent), s.recvs.check("receive completions", sent)...) {
		t.Error(err)
	}
	// Nothing may follow: every send is accounted for.
	var extra [1]cq.WC
	for _, q := range []*cq.CQ{s.a.SendCQ(), s.b.RecvCQ()} {
		if n, err := q.Poll(extra[:]); n != 0 || err != nil {
			t.Errorf("after the last completion: Poll = %d %+v, %v", n, extra[0], err)
		}
	}
	t.Logf("%d sends from %d goroutines in %v", total, stressSenders, stressFor)
}

// send posts batches of signaled sends until the deadline. Each send takes
// a credit (a posted receive) and a free buffer slot first, so that the
// peer never lacks a receive (iWARP has no receiver-not-ready retry) and
// the send CQ never holds more than it can.
//
// A full queue fails the test. At most stressDepth requests are
// outstanding on each queue, counted until their completion is polled, and
// both kernels hand a slot back before they complete its request: rxe
// advances the consumer index before rxe_cq_post (do_complete in
// rxe_comp.c and rxe_resp.c), and siw clears an element's valid flag when
// it takes the element (siw_activate_tx_from_sq, siw_rqe_get). So ErrQueueFull
// here would mean that a ring lost count of its free slots.
func (s *stress) send(g int, deadline time.Time) {
	var wrs [stressBatchMax]uverbs.SendWR
	var sges [stressBatchMax]uverbs.SGE
	seq := uint64(0)
	// Past the deadline until it has posted once, so that "posted
	// nothing" means stuck, not starved by a busy guest.
	for batch := 1; seq == 0 || time.Now().Before(deadline); batch = batch%stressBatchMax + 1 {
		for i := range batch {
			slot, ok := s.take()
			if !ok {
				return
			}
			if s.sendBusy[slot].Swap(true) {
				s.fail(fmt.Errorf("send slot %d handed out twice", slot))
				return
			}
			id := stressID(g, slot, seq)
			n := stressLen(g, seq)
			msg := s.sbuf[slot*stressSlot : slot*stressSlot+n]
			binary.LittleEndian.PutUint64(msg, id)
			for j := stressHdr; j < n; j++ {
				msg[j] = stressByte(id, j)
			}
			flags := uverbs.SendSignaled
			if n <= stressCap.MaxInlineData && seq%2 == 0 {
				flags |= uverbs.SendInline
			}
			sges[i] = uverbs.SGE{Addr: s.smr.Addr() + uint64(slot*stressSlot), Length: uint32(n), LKey: s.smr.LKey()}
			wrs[i] = uverbs.SendWR{ID: id, Opcode: uverbs.WRSend, Flags: flags, SGE: sges[i : i+1]}
			seq++
		}
		if n, err := s.a.QP().PostSend(wrs[:batch]); err != nil {
			s.fail(fmt.Errorf("goroutine %d: PostSend posted %d of %d: %w", g, n, batch, err))
			return
		}
		s.sent[g].Store(seq)
	}
}

// take waits for a credit and then a send slot.
func (s *stress) take() (int, bool) {
	select {
	case <-s.credits:
	case <-s.ctx.Done():
		return 0, false
	}
	select {
	case slot := <-s.slots:
		return slot, true
	case <-s.ctx.Done():
		return 0, false
	}
}

// repost posts receives into the slots the receive pollers freed, and
// gives a credit to the senders for each.
func (s *stress) repost() {
	var sge [1]uverbs.SGE
	for {
		var j int
		select {
		case j = <-s.free:
		case <-s.ctx.Done():
			return
		}
		if s.recvBusy[j].Swap(true) {
			s.fail(fmt.Errorf("receive slot %d posted twice", j))
			return
		}
		sge[0] = uverbs.SGE{Addr: s.rmr.Addr() + uint64(j*stressSlot), Length: stressSlot, LKey: s.rmr.LKey()}
		if _, err := s.b.QP().PostRecv([]uverbs.RecvWR{{ID: uint64(j), SGE: sge[:]}}); err != nil {
			s.fail(fmt.Errorf("PostRecv: %w", err))
			return
		}
		s.credits <- struct{}{}
	}
}

// poll polls q in batches and checks each completion until every send
// posted has its completion here.
func (s *stress) poll(q *cq.CQ, count *atomic.Uint64, check func(*cq.WC) error) {
	var wc [8]cq.WC
	var drain time.Time
	for s.ctx.Err() == nil {
		n, err := q.Poll(wc[:])
		if err != nil {
			s.fail(fmt.Errorf("Poll: %w", err))
			return
		}
		for i := range wc[:n] {
			if err := wc[i].Err(); err != nil {
				s.fail(fmt.Errorf("completion %#x: %w", wc[i].ID, err))
				return
			}
			if err := check(&wc[i]); err != nil {
				s.fail(err)
				return
			}
		}
		count.Add(uint64(n))
		if n > 0 || !s.sendsDone.Load() {
			runtime.Gosched()
			continue
		}
		var total uint64
		for g := range s.sent {
			total += s.sent[g].Load()
		}
		switch got := count.Load(); {
		case got == total:
			return
		case drain.IsZero():
			drain = time.Now().Add(stressDrain)
		case time.Now().After(drain):
			s.fail(fmt.Errorf("%d of %d completions %v after the last send", got, total, stressDrain))
			return
		}
		runtime.Gosched()
	}
}

func (s *stress) sendDone(wc *cq.WC) error {
	g, slot, seq := splitStressID(wc.ID)
	if g >= stressSenders || slot >= stressDepth {
		return fmt.Errorf("send completion with a wr_id %#x that was never posted", wc.ID)
	}
	if wc.Opcode != cq.OpSend || int(wc.ByteLen) != stressLen(g, seq) {
		return fmt.Errorf("send completion %#x: opcode %v, byte_len %d, want %v and %d", wc.ID, wc.Opcode, wc.ByteLen, cq.OpSend, stressLen(g, seq))
	}
	if n := s.sends.add(g, seq); n != 1 {
		return fmt.Errorf("send completion %#x seen %d times", wc.ID, n)
	}
	if !s.sendBusy[slot].Swap(false) {
		return fmt.Errorf("send completion %#x for slot %d, which has no send", wc.ID, slot)
	}
	s.slots <- slot
	return nil
}

func (s *stress) recvDone(wc *cq.WC) error {
	j := int(wc.ID)
	if wc.ID >= stressDepth || !s.recvBusy[j].Load() {
		return fmt.Errorf("receive completion with a wr_id %#x that is not posted", wc.ID)
	}
	msg := s.rbuf[j*stressSlot : (j+1)*stressSlot]
	id := binary.LittleEndian.Uint64(msg)
	g, slot, seq := splitStressID(id)
	if g >= stressSenders || slot >= stressDepth {
		return fmt.Errorf("receive %d holds a message with wr_id %#x that was never sent", j, id)
	}
	n := stressLen(g, seq)
	if wc.Opcode != cq.OpRecv || int(wc.ByteLen) != n {
		return fmt.Errorf("receive of %#x: opcode %v, byte_len %d, want %v and %d", id, wc.Opcode, wc.ByteLen, cq.OpRecv, n)
	}
	for i := stressHdr; i < n; i++ {
		if msg[i] != stressByte(id, i) {
			return fmt.Errorf("receive of %#x: byte %d is %#x, want %#x", id, i, msg[i], stressByte(id, i))
		}
	}
	if c := s.recvs.add(g, seq); c != 1 {
		return fmt.Errorf("message %#x received %d times", id, c)
	}
	s.recvBusy[j].Store(false)
	s.free <- j
	return nil
}
