package mlx5

import (
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// fakeHCA plays the device for one QP's send queue: it reads the send
// counter of the doorbell record, and for every new WQE (one block each
// here) writes a requester CQE, body first and the owner byte's word last,
// without passing the consumer index in the CQ's doorbell record.
type fakeHCA struct {
	q    *qp
	done chan struct{}
}

func (h *fakeHCA) run(t *testing.T, n int) {
	defer close(h.done)
	q, cq := h.q, h.q.sendCQ
	size := cq.mask + 1
	sent := uint32(0)
	for int(sent) < n {
		runtime.Gosched()
		posted := binary.BigEndian.Uint32(bswapWord(mem.Uint32(q.db.b, 4).Load()))
		for sent != posted&0xffff && int(sent) < n {
			for sent-binary.BigEndian.Uint32(bswapWord(mem.Uint32(cq.db.b, 0).Load())) >= size {
				runtime.Gosched() // the CQ is full: wait for the consumer
			}
			idx := sent & (q.sq.wqeCnt - 1)
			ctrl := mem.At[ctrlSeg](q.buf, q.sq.off+int(idx)*64)
			if ctrl.opmodIdxOpcode.get()>>8&0xffff != sent&0xffff {
				t.Errorf("WQE %d has counter %d", sent, ctrl.opmodIdxOpcode.get()>>8)
				return
			}
			off := int(sent&cq.mask) * 64
			e := mem.At[cqe](cq.buf, off)
			e.srqnUIdx.set(q.rsn)
			e.sopDropQPN.set(opSend<<24 | q.qpn)
			var tail [4]byte
			binary.BigEndian.PutUint16(tail[:], uint16(sent))
			tail[3] = cqeReq << 4
			if sent&size != 0 {
				tail[3] |= 1
			}
			mem.Uint32(cq.buf, off+60).Store(binary.NativeEndian.Uint32(tail[:]))
			sent++
		}
	}
}

func bswapWord(v uint32) []byte {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], v)
	return b[:]
}

// TestConcurrentPostPoll posts on one goroutine and polls on another while
// a third plays the device: every wr_id comes back once, in order, and the
// race detector sees the indices that cross between the two.
func TestConcurrentPostPoll(t *testing.T) {
	const n = 3000
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	var sendMu, cqMu sync.Mutex // the caller's locks
	q := newQP(t, c, qpOpts{sendWR: 32, sendSGE: 1, qpn: 0x42, sigAll: true, sendCQ: newCQ(t, c, 15, 3), cqLock: &cqMu})
	h := &fakeHCA{q: q, done: make(chan struct{})}
	go h.run(t, n)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		wr := provider.SendWR{Opcode: abi.IB_UVERBS_WR_SEND, Flags: abi.IB_SEND_SIGNALED, SGE: []provider.SGE{sge1}}
		for i := 0; i < n; {
			sendMu.Lock()
			k := 0
			for ; k < 3 && i < n; k++ {
				wr.ID = uint64(i)
				if err := q.sq.Put(&wr); err != nil {
					if !errors.Is(err, provider.ErrFull) {
						t.Error(err)
					}
					break
				}
				i++
			}
			if k > 0 {
				q.sq.Flush()
			}
			sendMu.Unlock()
			if k == 0 {
				runtime.Gosched()
			}
		}
	}()
	go func() {
		defer wg.Done()
		wc := make([]provider.WC, 4)
		for next := 0; next < n; {
			cqMu.Lock()
			got := q.sendCQ.Poll(wc)
			cqMu.Unlock()
			if got == 0 {
				runtime.Gosched()
			}
			for _, w := range wc[:got] {
				if w.ID != uint64(next) || w.Status != 0 || w.Opcode != abi.IB_WC_SEND {
					t.Errorf("completion %d: %+v", next, w)
					return
				}
				next++
			}
		}
	}()
	wg.Wait()
	<-h.done
	sendMu.Lock()
	if !q.sq.Idle() {
		t.Error("not idle after every completion")
	}
	sendMu.Unlock()
}

// TestConcurrentResetPoll moves a QP to RESET, under its send lock only,
// while another goroutine polls its CQ under the CQ's lock: the cleaning
// takes the CQ's lock through QPInit's SendCQLock (the CQ has none of its
// own), which the race detector checks, and every CQE is either polled or
// cleaned, never both.
func TestConcurrentResetPoll(t *testing.T) {
	const rounds = 300
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	var sendMu, cqMu sync.Mutex
	q := newQP(t, c, qpOpts{sendWR: 32, sendSGE: 1, qpn: 0x42, sendCQ: newCQ(t, c, 15, 3), cqLock: &cqMu})
	cq := q.sendCQ
	size := cq.mask + 1
	var polled int
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		wc := make([]provider.WC, 4)
		for {
			select {
			case <-stop:
				return
			default:
			}
			cqMu.Lock()
			polled += cq.Poll(wc)
			cqMu.Unlock()
			runtime.Gosched()
		}
	}()
	prod, written := uint32(0), 0
	for r := 0; r < rounds; r++ {
		// The device: three completions, where the ring has room.
		cqMu.Lock()
		for k := 0; k < 3 && prod-cq.consIndex.Load() < size; k++ {
			off := int(prod&cq.mask) * 64
			e := mem.At[cqe](cq.buf, off)
			e.srqnUIdx.set(q.rsn)
			e.sopDropQPN.set(opSend<<24 | q.qpn)
			var tail [4]byte
			tail[3] = cqeReq << 4
			if prod&size != 0 {
				tail[3] |= 1
			}
			mem.Uint32(cq.buf, off+60).Store(binary.NativeEndian.Uint32(tail[:]))
			prod++
			written++
		}
		cqMu.Unlock()
		sendMu.Lock()
		q.sq.Modified(abi.IB_QPS_RESET)
		sendMu.Unlock()
	}
	close(stop)
	<-done
	cqMu.Lock()
	defer cqMu.Unlock()
	if cq.consIndex.Load() != prod {
		t.Errorf("consumer index %d after %d CQEs", cq.consIndex.Load(), prod)
	}
	if polled > written {
		t.Errorf("polled %d of %d CQEs", polled, written)
	}
}
