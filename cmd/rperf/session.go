package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/perftest"
	"github.com/purerdma/purerdma/uverbs"
)

// cqModDefault is perftest's DEF_CQ_MOD: BW tests and send_lat ask for a
// completion every cqMod sends.
const cqModDefault = 100

// session is one connected side with the scratch the hot loops reuse, so
// that they do not allocate.
type session struct {
	ctx    context.Context
	o      *options
	r      *res
	conn   *oob
	rem    dest
	server bool
	cqMod  int
	psn    uint32

	wr    []uverbs.SendWR // one
	sge   []uverbs.SGE    // one
	rwr   []uverbs.RecvWR // rxDepth identical receives
	rsge  []uverbs.SGE
	wc    []cq.WC
	tpost []int64 // ticks while a round runs, then ns (inNs)
	tcomp []int64
	delta []int64 // stats scratch
}

// now is a timestamp of the running round: the CPU's counter, as
// perftest's get_cycles, which inNs turns into ns after the round. Go's
// clock (time.Since) was a vDSO call on the system stack per post, work
// the C side does not do inside its loop.
func (s *session) now() int64 { return ticks() }

// clockMark is a counter reading and the clock at once, the ends of the
// stretch inNs scales the round's ticks by.
type clockMark struct {
	ticks int64
	at    time.Time
}

func mark() clockMark { return clockMark{ticks(), time.Now()} }

// inNs turns the ticks in ts, read between start and end, into ns since
// start, at the counter's rate over that stretch (perftest divides by the
// CPU's MHz from /proc/cpuinfo; the clock's own reading of the same
// stretch needs no such figure).
func inNs(ts []int64, start, end clockMark) {
	perTick := 1.0
	if d := end.ticks - start.ticks; d > 0 {
		perTick = float64(end.at.Sub(start.at)) / float64(d)
	}
	for i, t := range ts {
		ts[i] = int64(float64(t-start.ticks) * perTick)
	}
}

// open makes the resources, exchanges addresses and connects the QP. The
// server adopts the client's test parameters.
func open(ctx context.Context, o *options) (_ *session, err error) {
	s := &session{ctx: ctx, o: o, server: o.server == ""}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	psn := rand.Uint32() & 0xffffff
	s.psn = psn
	my := func() dest {
		return dest{test: uint8(o.test), all: o.all, lid: s.r.port.LID, qpn: s.r.qp.Num(), psn: psn,
			rkey: s.r.mr.RKey(), addr: s.r.mr.Addr() + uint64(s.r.half),
			size: uint32(o.size), iters: uint32(o.iters), gid: s.r.gid}
	}
	if s.server {
		if s.conn, err = listenOOB(ctx, o.port); err != nil {
			return nil, err
		}
		b := make([]byte, msgSize)
		if _, err = io.ReadFull(s.conn.c, b); err != nil {
			return nil, fmt.Errorf("couldn't read the remote address: %v", err)
		}
		if s.rem, err = decodeDest(b); err != nil {
			return nil, err
		}
		if int(s.rem.test) != o.test {
			return nil, fmt.Errorf("the client runs another test (%d), not %s", s.rem.test, perftest.Tests[o.test].Name)
		}
		o.size, o.iters, o.all = int(s.rem.size), int(s.rem.iters), s.rem.all
		if s.r, err = newRes(o); err != nil {
			return nil, err
		}
		s.setup()
		if _, err = s.conn.c.Write(my().encode()); err != nil {
			return nil, fmt.Errorf("couldn't send the local address: %v", err)
		}
	} else {
		if s.r, err = newRes(o); err != nil {
			return nil, err
		}
		s.setup()
		if s.conn, err = dialOOB(ctx, o.server, o.port); err != nil {
			return nil, err
		}
		if s.rem, err = s.conn.exchange(my()); err != nil {
			return nil, err
		}
	}
	if err = s.r.connect(o, psn, s.rem); err != nil {
		return nil, err
	}
	return s, nil
}

// setup makes the scratch and posts the receives of the send tests, which
// land in the second half.
func (s *session) setup() {
	s.cqMod = min(cqModDefault, s.o.txDepth)
	s.sge = []uverbs.SGE{s.r.local(0)}
	s.wr = []uverbs.SendWR{{SGE: s.sge}}
	s.rsge = []uverbs.SGE{{Addr: s.r.mr.Addr() + uint64(s.r.half), Length: uint32(s.r.half), LKey: s.r.mr.LKey()}}
	s.rwr = make([]uverbs.RecvWR, s.r.rxDepth)
	for i := range s.rwr {
		s.rwr[i] = uverbs.RecvWR{ID: uint64(i), SGE: s.rsge}
	}
	s.wc = make([]cq.WC, 16)
	s.tpost = make([]int64, s.o.iters)
	s.tcomp = make([]int64, s.o.iters)
	s.delta = make([]int64, s.o.iters)
}

func (s *session) close() error {
	if s.conn != nil {
		s.conn.close()
	}
	if s.r != nil {
		return s.r.close()
	}
	return nil
}

// postRecvs posts the receives once, before connecting.
func (s *session) postRecvs() error {
	t := perftest.Tests[s.o.test].Name
	if t != "send_lat" && t != "send_bw" {
		return nil
	}
	if n, err := s.r.qp.PostRecv(s.rwr); err != nil || n != len(s.rwr) {
		return fmt.Errorf("couldn't post receives (%d): %v", n, err)
	}
	return nil
}

// spin is called on each empty poll; every 1024 calls it notices the
// context's end. It busy-polls as perftest does and yields only when this
// goroutine holds the only P (a test's in-process pair under
// AllocsPerRun): each Gosched wakes an idle P's thread, a futex wake and a
// context switch that steal a vCPU from rxe's kernel work and the peer.
func (s *session) spin(n *int) error {
	if *n++; *n&1023 == 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if runtime.GOMAXPROCS(0) == 1 {
			runtime.Gosched()
		}
	}
	return nil
}

// pollOne busy-polls c for one completion and checks its status.
func (s *session) pollOne(c *cq.CQ) error {
	spins := 0
	for {
		n, err := c.Poll(s.wc[:1])
		if err != nil {
			return fmt.Errorf("poll CQ failed: %v", err)
		}
		if n > 0 {
			if s.wc[0].Status != cq.Success {
				return fmt.Errorf("completion with error: %s (vendor error 0x%x), wr_id %d", s.wc[0].Status, s.wc[0].VendorErr, s.wc[0].ID)
			}
			return nil
		}
		if err := s.spin(&spins); err != nil {
			return err
		}
	}
}

// measure runs one size: the hot loop of the test.
func (s *session) measure(size int) error {
	switch perftest.Tests[s.o.test].Name {
	case "write_lat":
		return s.latWrite(size)
	case "read_lat":
		if s.server {
			return nil
		}
		return s.latRead(size, uverbs.WRRDMARead)
	case "atomic_lat":
		if s.server {
			return nil
		}
		return s.latRead(size, uverbs.WRAtomicFetchAndAdd)
	case "send_lat":
		return s.latSend(size)
	case "write_bw":
		if s.server {
			return nil
		}
		return s.bw(size, uverbs.WRRDMAWrite)
	case "read_bw":
		if s.server {
			return nil
		}
		return s.bw(size, uverbs.WRRDMARead)
	case "send_bw":
		if s.server {
			return s.bwRecv()
		}
		return s.bw(size, uverbs.WRSend)
	}
	return fmt.Errorf("unknown test")
}

// reports tells whether this side prints results: both sides of the
// ping-pong tests and the receiver of send_bw, else the client only.
func (s *session) reports() bool {
	switch perftest.Tests[s.o.test].Name {
	case "write_lat", "send_lat", "send_bw":
		return true
	}
	return !s.server
}

// round runs one size between two barriers and returns its result.
func (s *session) round(size int) (perftest.Result, error) {
	if perftest.Tests[s.o.test].Name == "write_lat" {
		clear(s.r.buf[s.r.half : s.r.half+size])
	}
	if err := s.conn.sync('r'); err != nil {
		return perftest.Result{}, err
	}
	start := mark()
	if err := s.measure(size); err != nil {
		return perftest.Result{}, err
	}
	end := mark()
	inNs(s.tpost, start, end)
	inNs(s.tcomp, start, end)
	if err := s.conn.sync('d'); err != nil {
		return perftest.Result{}, err
	}
	res := perftest.Result{Test: perftest.Tests[s.o.test].Name, Bytes: size, Iters: s.o.iters}
	if perftest.Tests[s.o.test].Lat {
		rtt := 2
		if n := res.Test; n == "read_lat" || n == "atomic_lat" {
			rtt = 1
		}
		latStats(&res, s.tpost, s.delta, rtt)
	} else {
		bwStats(&res, s.tpost, s.tcomp, s.cqMod, s.server)
	}
	return res, nil
}

// perf is the program after option parsing.
func perf(ctx context.Context, o *options, stdout io.Writer) (err error) {
	s, err := open(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := s.postRecvs(); err != nil {
		return err
	}
	t := perftest.Tests[o.test]
	if !o.json {
		printBanner(stdout, s)
	}
	enc := json.NewEncoder(stdout)
	for _, size := range o.sizes() {
		res, err := s.round(size)
		if err != nil {
			return err
		}
		if !s.reports() {
			continue
		}
		if o.json {
			if err := enc.Encode(res); err != nil {
				return err
			}
		} else if t.Lat {
			fmt.Fprint(stdout, perftest.FormatLatRow(res))
		} else {
			fmt.Fprint(stdout, perftest.FormatBWRow(res))
		}
	}
	if !o.json {
		fmt.Fprint(stdout, perftest.ResultLine)
	}
	return nil
}
