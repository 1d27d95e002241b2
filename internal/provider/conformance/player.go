package conformance

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// Player is a Go provider's side of a script: its queues, and hooks for
// what the fake kernel does differently for each provider's rings. Run
// plays the operations that only drive the provider the same way for
// every provider.
type Player struct {
	SQ       provider.SQ
	RQ, SRQ  provider.RQ
	CQ       provider.CQ
	Doorbell func() int // the fake device's doorbell count so far; nil for mlx5, which has none
	// PrepSend, when not nil, adjusts each send request before it is put
	// (rxe's UD sends name the harness's address handle).
	PrepSend func(w *provider.SendWR)
	Consume  func(q string, n uint32)       // the fake kernel takes n slots of queue q
	CQE      func(t testing.TB, f []uint64) // the fake kernel writes one completion
	// CQEBytes, for mlx5, is the device writing an Op's Bytes into its
	// next CQ entry.
	CQEBytes func(t testing.TB, b []byte)
	Dump     func(q string) []string // queue q's records
	// Modify, for mlx5, is a MODIFY_QP to a state (IB_QPS_*) and the
	// driver's part of it.
	Modify func(state uint32)
	// After, when not nil, gives the records that follow every
	// operation (mlx5: the device's view of the doorbells).
	After func() []string
	Out   []string // the transcript so far

	ops int
	wcs []provider.WC
}

// recvBatcher is a receive queue with the batch uverbs' PostRecv calls:
// Put of each request until one fails and Flush, in one call.
type recvBatcher interface {
	Post(wrs []provider.RecvWR, maxSGE int) (int, error)
}

// sendBatcher is a send queue with the batch uverbs' PostSend calls
// first: a run of plain requests and their doorbell in one call.
type sendBatcher interface {
	PutPlain(wrs []provider.SendWR) (int, error)
	SetPlainOps(ops uint32)
}

// send posts ws as uverbs' PostSend does and returns how many were put:
// on a driver with PutPlain, runs of plain requests through it and each
// other request alone through Put, until one is refused; elsewhere Put
// of each. Then Flush, if anything was put and not yet rung. Which
// opcodes are plain is uverbs' choice for an RC QP that may read (all
// the driver's straight ones) or a UD QP (none: its requests carry an
// address); so the scripts against C cover the batch path.
func (p *Player) send(t testing.TB, u Setup, ws []provider.SendWR) int {
	t.Helper()
	b, batch := p.SQ.(sendBatcher)
	if batch {
		ops := ^uint32(0)
		if strings.HasSuffix(u.Provider, "-ud") {
			ops = 0
		}
		b.SetPlainOps(ops)
	}
	n := 0
	for n < len(ws) {
		if batch {
			k, err := b.PutPlain(ws[n:])
			if err != nil && err != provider.ErrStop {
				t.Fatal(err)
			}
			if n += k; n == len(ws) {
				return n // PutPlain rang the doorbell
			}
		}
		if err := p.SQ.Put(&ws[n]); err != nil {
			break
		}
		n++
	}
	if n > 0 {
		if err := p.SQ.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// Run plays the script's operations, as uverbs' PostSend and PostRecv
// drive a provider (send; receives through the queue's Post where it has
// one, else Put of each until one fails, then Flush if any was put). It
// returns the transcript.
func (p *Player) Run(t testing.TB, s *Script) []string {
	t.Helper()
	for _, op := range s.Ops {
		switch op.Kind {
		case "send":
			db := p.doorbell()
			ws := make([]provider.SendWR, len(op.Send))
			for i := range op.Send {
				w := op.Send[i]
				if p.PrepSend != nil {
					p.PrepSend(&w)
				}
				if w.Flags&abi.IB_SEND_INLINE != 0 {
					// The script's addresses are offsets into Pattern.
					w.SGE = append([]provider.SGE(nil), w.SGE...)
					for k := range w.SGE {
						w.SGE[k].Addr = addr(Pattern[w.SGE[k].Addr:])
					}
				}
				ws[i] = w
			}
			n := p.send(t, s.Setup, ws)
			p.post("send", len(op.Send), n, p.doorbell()-db)
		case "recv", "srecv":
			q := p.RQ
			if op.Kind == "srecv" {
				q = p.SRQ
			}
			n := 0
			if b, ok := q.(recvBatcher); ok {
				// uverbs' way with the drivers that have it.
				n, _ = b.Post(op.Recv, math.MaxInt)
			} else {
				for i := range op.Recv {
					if err := q.Put(&op.Recv[i]); err != nil {
						break
					}
					n++
				}
				if n > 0 {
					if err := q.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			p.post(op.Kind, len(op.Recv), n, 0)
		case "consume":
			p.Consume(op.Queue, op.N)
		case "cqe":
			if op.Bytes != nil {
				p.CQEBytes(t, op.Bytes)
				break
			}
			p.CQE(t, op.CQE)
		case "arm":
			p.CQ.Arm(op.N != 0)
		case "modify":
			p.Modify(op.N)
		case "poll":
			if cap(p.wcs) < int(op.N) {
				p.wcs = make([]provider.WC, op.N)
			}
			// Poll, as cq.CQ.Poll drives the provider (Next has the
			// unit tests).
			wcs := p.wcs[:op.N]
			// Cleared first, as the C harnesses clear theirs: a
			// driver may leave fields a completion does not have as
			// the caller's array had them (libmlx5 does).
			clear(wcs)
			n := p.CQ.Poll(wcs)
			p.Out = append(p.Out, fmt.Sprintf("polled %d", n))
			for i := range n {
				p.Out = append(p.Out, FormatWC(&wcs[i]))
			}
		case "dump":
			p.Out = append(p.Out, p.Dump(op.Queue)...)
		default:
			t.Fatalf("op %q", op.Kind)
		}
		if p.After != nil {
			p.Out = append(p.Out, p.After()...)
		}
	}
	return p.Out
}

func (p *Player) doorbell() int {
	if p.Doorbell == nil {
		return 0
	}
	return p.Doorbell()
}

// post records a post of n requests of which posted went in.
func (p *Player) post(kind string, n, posted, doorbells int) {
	if p.Doorbell == nil {
		p.Out = append(p.Out, fmt.Sprintf("op %d %s %d %d", p.ops, kind, n, posted))
	} else {
		p.Out = append(p.Out, fmt.Sprintf("op %d %s %d %d db %d", p.ops, kind, n, posted, doorbells))
	}
	p.ops++
}

// addr is the address of b's first byte, as a request carries it.
func addr(b []byte) uint64 { return uint64(reflect.ValueOf(&b[0]).Pointer()) }

// Report fails t with the first 20 differences and the count of the
// rest.
func Report(t testing.TB, diffs []string) {
	t.Helper()
	for i, d := range diffs {
		if i == 20 {
			t.Errorf("... and %d more differences", len(diffs)-i)
			break
		}
		t.Error(d)
	}
}

// RecvScript is the receive script of both providers: it posts wrs with
// kind ("recv" or "srecv") on queue q in batches of 1 up to fit, the
// requests the ring holds, so that the ring wraps at every offset,
// dumping q after each batch and letting the kernel take it; then posts
// the first 10 in one call (fit of them go in) and one more on the full
// ring.
func RecvScript(setup Setup, kind, q string, wrs []provider.RecvWR, fit int) *Script {
	s := &Script{Setup: setup}
	full := wrs[:10]
	for i := 0; len(wrs) > 0; i++ {
		n := min(len(wrs), 1+i%fit)
		s.Ops = append(s.Ops, Op{Kind: kind, Recv: wrs[:n]},
			Op{Kind: "dump", Queue: q},
			Op{Kind: "consume", Queue: q, N: uint32(n)})
		wrs = wrs[n:]
	}
	s.Ops = append(s.Ops,
		Op{Kind: kind, Recv: full},
		Op{Kind: kind, Recv: full[:1]},
		Op{Kind: "dump", Queue: q})
	return s
}
