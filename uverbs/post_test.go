package uverbs

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
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

// TestPostErrors: a request the queue refuses ends the batch there, the
// ones before it posted, with an error that names it, on the host's rxe
// queues.
func TestPostErrors(t *testing.T) {
	qp, dev, _, _ := hostQP(t)
	sge := make([]SGE, 5)
	buf := make([]byte, 8)
	inline := SendWR{Opcode: WRSend, Flags: SendInline, SGE: []SGE{{Addr: uint64(uintptr(unsafe.Pointer(&buf[0]))), Length: 8}}}
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
