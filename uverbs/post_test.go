package uverbs

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/spin"
)

// TestPostSendAllocs checks that a request built on the caller's stack
// stays there: PostSend copies what the provider needs, so nothing the
// request points to escapes. (Keeping the pointer to a UD request's
// address handle in the QP once moved every caller's SGE array to the
// heap.) The QP is the host cost table's, on rxe's queues over Go rings.
func TestPostSendAllocs(t *testing.T) {
	ah := &AH{av: provider.AH{Num: 5}}
	for _, typ := range []QPType{RC, UD} {
		t.Run(typ.String(), func(t *testing.T) {
			qp, _, takeSQ, _ := hostQP(t)
			qp.typ = typ
			qp.setNoReads(false)
			var failed error
			allocs := testing.AllocsPerRun(100, func() {
				sge := [1]SGE{{Addr: 0x10000, Length: 64, LKey: 0x55}}
				wr := [1]SendWR{{ID: 1, Opcode: WRSend, SGE: sge[:], AH: ah, RemoteQPN: 3, RemoteQKey: 4}}
				if _, err := qp.PostSend(wr[:]); err != nil {
					failed = err
				}
				takeSQ()
			})
			if failed != nil {
				t.Fatal(failed)
			}
			if allocs != 0 {
				t.Errorf("PostSend of a request on the stack allocates %v times, want 0", allocs)
			}
		})
	}
}

// TestPlain checks PostSend's short way against checkSend: every request
// plain passes must be one checkSend accepts and a driver may read as it
// is (no address handle, no window, the signaled flag already set on an
// sq_sig_all QP), over every opcode, flag, SGE count and QP kind; and
// the common requests must take the short way.
func TestPlain(t *testing.T) {
	ah, mw := &AH{}, &MW{}
	sges := make([]SGE, 5)
	short := 0
	for _, typ := range []QPType{RC, UC, UD} {
		for _, sigAll := range []bool{false, true} {
			for _, noReads := range []bool{false, true} {
				qp := &QP{typ: typ, sigAll: sigAll, ssge: make([]provider.SGE, 4),
					cap: QPCap{MaxSendSGE: 4, MaxInlineData: 64}, caps: DeviceAtomicWrite}
				qp.setNoReads(noReads)
				for op := WROpcode(0); op < 40; op++ {
					for flags := SendFlags(0); flags < 1<<5; flags++ {
						for _, nsge := range []int{0, 1, 4, 5} {
							for _, h := range []*AH{nil, ah} {
								for _, w := range []*MW{nil, mw} {
									wr := SendWR{Opcode: op, Flags: flags, SGE: sges[:nsge], AH: h, MW: w, RemoteAddr: 8}
									if !qp.plain(&wr) {
										continue
									}
									short++
									if err := qp.checkSend(&wr); err != nil {
										t.Fatalf("%s sigAll %v noReads %v: plain passes %+v, checkSend refuses it: %v", typ, sigAll, noReads, wr, err)
									}
									if h != nil || w != nil || sigAll && flags&SendSignaled == 0 {
										t.Fatalf("%s sigAll %v: plain passes %+v, which needs the copy", typ, sigAll, wr)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if short == 0 {
		t.Fatal("plain passed nothing")
	}
	for _, c := range []struct {
		typ QPType
		wr  SendWR
	}{
		{RC, SendWR{Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: sges[:1]}},
		{RC, SendWR{Opcode: WRRDMARead, Flags: SendSignaled | SendFence, SGE: sges[:4]}},
		{RC, SendWR{Opcode: WRSend, SGE: sges[:1]}},
		{RC, SendWR{Opcode: WRSendWithImm, Flags: SendSolicited, SGE: sges[:0]}},
		{RC, SendWR{Opcode: WRRDMAWriteWithImm, SGE: sges[:2]}},
		{UC, SendWR{Opcode: WRRDMAWrite, SGE: sges[:1]}},
		{UC, SendWR{Opcode: WRSend, SGE: sges[:1]}},
	} {
		qp := &QP{typ: c.typ, ssge: make([]provider.SGE, 4)}
		qp.setNoReads(false)
		if !qp.plain(&c.wr) {
			t.Errorf("%s %s flags %#x: not plain, want the short way", c.typ, c.wr.Opcode, uint32(c.wr.Flags))
		}
	}
}

// TestOwnerPostAllocs: posting through the owner handles keeps the
// caller's requests on its stack, as PostSend and PostRecv do.
func TestOwnerPostAllocs(t *testing.T) {
	qp, _, takeSQ, takeRQ := hostQP(t)
	sq, err := qp.OwnSend()
	if err != nil {
		t.Fatal(err)
	}
	rq, err := qp.OwnRecv()
	if err != nil {
		t.Fatal(err)
	}
	var failed error
	allocs := testing.AllocsPerRun(100, func() {
		sge := [1]SGE{{Addr: 0x10000, Length: 64, LKey: 0x55}}
		wr := [1]SendWR{{ID: 1, Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: sge[:], RemoteAddr: 8, RKey: 3}}
		rwr := [1]RecvWR{{ID: 2, SGE: sge[:]}}
		if _, err := sq.Post(wr[:]); err != nil {
			failed = err
		}
		if _, err := rq.Post(rwr[:]); err != nil {
			failed = err
		}
		takeSQ()
		takeRQ()
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if allocs != 0 {
		t.Errorf("posting through the owners allocates %v times, want 0", allocs)
	}
	sq.Release()
	rq.Release()
}

// inlineData is what the tests' inline sends carry, by address. A
// global: a local's bytes, whose address as a uintptr does not make them
// escape, may live on the goroutine's stack, which moves when it grows,
// and the address then reads whatever is there (TestPostSlowPath's
// rings differed, depending on the tests run before it).
var inlineData = func() (b [64]byte) {
	for i := range b {
		b[i] = byte(i + 1)
	}
	return b
}()

// TestPostErrors: a request the queue refuses ends the batch there, the
// ones before it posted, with an error that names it, on the host's rxe
// queues.
func TestPostErrors(t *testing.T) {
	qp, dev, _, _ := hostQP(t)
	sge := make([]SGE, 5)
	inline := SendWR{Opcode: WRSend, Flags: SendInline, SGE: []SGE{{Addr: uint64(uintptr(unsafe.Pointer(&inlineData[0]))), Length: 8}}}
	// bells: the requests before the refused one are in the ring and
	// rung, as under ibv_post_send.
	for _, c := range []struct {
		name  string
		post  func() (int, error)
		n     int
		bells int
		msg   string
	}{
		{"recv SGEs", func() (int, error) {
			return qp.PostRecv([]RecvWR{{SGE: sge[:1]}, {SGE: sge}, {SGE: sge[:1]}})
		}, 1, 0, "work request 1: 5 SGEs, the queue takes 4"},
		{"send SGEs", func() (int, error) {
			return qp.PostSend([]SendWR{{Opcode: WRSend, SGE: sge[:1]}, {Opcode: WRSend, SGE: sge}})
		}, 1, 1, "work request 1 (SEND): 5 SGEs, the QP takes 4"},
		{"send opcode", func() (int, error) {
			return qp.PostSend([]SendWR{{Opcode: 99}})
		}, 0, 0, "work request 0"},
		{"send opcode after inline", func() (int, error) {
			return qp.PostSend([]SendWR{{Opcode: WRSend}, inline, {Opcode: WRSend}, {Opcode: 99}})
		}, 3, 1, "work request 3"},
	} {
		before := dev.Doorbells
		n, err := c.post()
		if n != c.n || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: posted %d, %v; want %d and ErrInvalid saying %q", c.name, n, err, c.n, c.msg)
		}
		if bells := dev.Doorbells - before; bells != c.bells {
			t.Errorf("%s: %d doorbells, want %d", c.name, bells, c.bells)
		}
	}
}

// TestPostSlowPath: PostSend and PostRecv that find the lock held, or the
// side owned (its gate for Lock to shut), post in postSendSlow and
// postRecvSlow; those must put the same bytes and give the same results
// as the one-CAS way on a twin QP, and leave the lock free and the
// owner's gate open.
func TestPostSlowPath(t *testing.T) {
	sge := []SGE{{Addr: 0x10000, Length: 4096, LKey: 0x55}, {Addr: 0x20000, Length: 16, LKey: 0x66}}
	big := make([]SGE, 5)
	inline := SendWR{ID: 4, Opcode: WRSend, Flags: SendInline | SendSignaled,
		SGE: []SGE{{Addr: uint64(uintptr(unsafe.Pointer(&inlineData[0]))), Length: 16}}}
	write := SendWR{ID: 1, Opcode: WRRDMAWrite, Flags: SendSignaled, SGE: sge[:1], RemoteAddr: 0xdead0000, RKey: 0x77}
	write2 := SendWR{ID: 2, Opcode: WRRDMAWrite, SGE: sge, RemoteAddr: 0xbeef0000, RKey: 0x78}
	// Each post: a plain one, a batch with a request PutPlain leaves to
	// postRest, a batch refused at its second request.
	sends := [][]SendWR{{write}, {write2, inline, write}, {write, {ID: 9, Opcode: 99}, write2}}
	recvs := [][]RecvWR{{{ID: 10, SGE: sge}}, {{ID: 11, SGE: sge[:1]}, {ID: 12}, {ID: 15, SGE: sge}},
		{{ID: 13, SGE: sge[:1]}, {ID: 14, SGE: big}}}
	// What each post puts, sends and receives alike; the last one is
	// refused at its second request.
	posted := []int{1, 3, 1}
	// held: another goroutine holds the lock and lets it go a moment
	// later; owned: the side has an owner, whose gate Lock shuts.
	held := func(l *spin.GateLock) func() {
		l.Lock()
		done := make(chan struct{})
		go func() {
			time.Sleep(time.Millisecond)
			l.Unlock()
			close(done)
		}()
		return func() { <-done }
	}
	for _, q := range hostQPs {
		for _, way := range []string{"held", "owned"} {
			t.Run(q.name+"/"+way, func(t *testing.T) {
				fast, fdev, _, _ := q.mk(t)
				slow, sdev, _, _ := q.mk(t)
				var sq *SendQueue
				var rq *RecvQueue
				if way == "owned" {
					sq, rq = hostOwners(t, slow, true)
				}
				check := func(what string, l *spin.GateLock, i, fn, sn int, ferr, serr error) {
					t.Helper()
					if fn != sn || fmt.Sprint(ferr) != fmt.Sprint(serr) {
						t.Errorf("%s %d: slow path posted %d, %v; the fast one %d, %v", what, i, sn, serr, fn, ferr)
					}
					if refused := i == len(posted)-1; fn != posted[i] || (ferr != nil) != refused {
						t.Errorf("%s %d: posted %d, %v; want %d, refused %v", what, i, fn, ferr, posted[i], refused)
					}
					if way == "owned" {
						// The owner's gate is open again: it
						// gets in without the lock.
						if !l.Enter() {
							t.Fatalf("%s %d: the owner's gate is left shut", what, i)
						}
						l.Leave()
					} else if !l.TryLockFree() {
						t.Fatalf("%s %d: the lock is left held", what, i)
					} else {
						l.UnlockFree()
					}
				}
				for i, wrs := range sends {
					fn, ferr := fast.PostSend(wrs)
					wait := func() {}
					if way == "held" {
						wait = held(&slow.sendMu)
					}
					sn, serr := slow.PostSend(wrs)
					wait()
					check("send", &slow.sendMu, i, fn, sn, ferr, serr)
				}
				for i, wrs := range recvs {
					fn, ferr := fast.PostRecv(wrs)
					wait := func() {}
					if way == "held" {
						wait = held(&slow.recvMu)
					}
					sn, serr := slow.PostRecv(wrs)
					wait()
					check("recv", &slow.recvMu, i, fn, sn, ferr, serr)
				}
				if fdev != nil {
					for off, name := range map[uint64]string{1 << 12: "receive queue", 2 << 12: "send queue"} {
						if f, s := fdev.Maps[off], sdev.Maps[off]; !bytes.Equal(f, s) {
							t.Errorf("%s differs from the fast path's at byte %d", name, firstDiff(f, s))
						}
					}
				}
				if sq != nil {
					sq.Release()
					rq.Release()
				}
			})
		}
	}
}

// TestSetQueues: the data path finds each driver of this module by the
// concrete-type fields setSQ and setRQ fill (a foreign driver by none of
// them); a missed one would send that driver's posts the long way.
func TestSetQueues(t *testing.T) {
	for _, q := range hostQPs {
		qp, _, _, _ := q.mk(t)
		sends := map[string]bool{"mlx5": qp.mlx5SQ != nil, "rxe": qp.rxeSQ != nil, "siw": qp.siwSQ != nil}
		r := &qp.recv
		recvs := map[string]bool{"mlx5": r.mlx5 != nil, "rxe": r.rxe != nil, "siw": r.siw != nil, "mlx5 SRQ": r.mlx5SRQ != nil}
		for name, set := range sends {
			if set != (name == q.name) {
				t.Errorf("%s QP: send queue as %s's: %v", q.name, name, set)
			}
		}
		for name, set := range recvs {
			if set != (name == q.name) {
				t.Errorf("%s QP: receive queue as %s's: %v", q.name, name, set)
			}
		}
		qp.setSQ(&countSQ{})
		qp.recv.setRQ(&failRQ{})
		if qp.mlx5SQ != nil || qp.rxeSQ != nil || qp.siwSQ != nil || r.mlx5 != nil || r.rxe != nil || r.siw != nil || r.mlx5SRQ != nil {
			t.Errorf("%s QP: a foreign driver's queues keep a driver of this module's", q.name)
		}
	}
}

// TestPostClosed: a closed QP refuses sends and receives with ErrClosed,
// locked or owned, an empty batch too, without calling its driver (whose
// rings are gone), and leaves the locks free.
func TestPostClosed(t *testing.T) {
	for _, q := range hostQPs {
		t.Run(q.name, func(t *testing.T) {
			qp, dev, _, _ := q.mk(t)
			sq, rq := hostOwners(t, qp, true)
			qp.quiesce()
			qp.closeQueues()
			qp.resume()
			// What the driver could change: the rings, by offset, and
			// the doorbells.
			snapshot := func() string {
				if dev == nil {
					return ""
				}
				var b strings.Builder
				for _, off := range slices.Sorted(maps.Keys(dev.Maps)) {
					fmt.Fprintf(&b, "%x:%x;", off, dev.Maps[off])
				}
				fmt.Fprintf(&b, "doorbells %d", dev.Doorbells)
				return b.String()
			}
			before := snapshot()
			for _, post := range []struct {
				name string
				do   func([]SendWR) (int, error)
			}{{"PostSend", qp.PostSend}, {"SendQueue.Post", sq.Post}} {
				for _, wrs := range [][]SendWR{hostSendWRs(1), hostSendWRs(3), nil} {
					n, err := post.do(wrs)
					if n != 0 || !errors.Is(err, ErrClosed) {
						t.Errorf("%s of %d on a closed QP = %d, %v; want 0, ErrClosed", post.name, len(wrs), n, err)
					}
				}
			}
			for _, post := range []struct {
				name string
				do   func([]RecvWR) (int, error)
			}{{"PostRecv", qp.PostRecv}, {"RecvQueue.Post", rq.Post}} {
				for _, wrs := range [][]RecvWR{{{SGE: hostSGE}}, nil} {
					n, err := post.do(wrs)
					if n != 0 || !errors.Is(err, ErrClosed) {
						t.Errorf("%s of %d on a closed QP = %d, %v; want 0, ErrClosed", post.name, len(wrs), n, err)
					}
				}
			}
			for _, l := range []*spin.GateLock{&qp.sendMu, &qp.recvMu} {
				if !l.TryLockFree() {
					t.Fatal("a lock is left held")
				}
				l.UnlockFree()
			}
			if snapshot() != before {
				t.Error("a post on the closed QP reached the driver: its rings or doorbells changed")
			}
		})
	}
}
