package soak_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
)

// The regions: slots of slotSize bytes, each carrying one unit of work at
// a time. The poster's region holds the source of slot i at srcOff(i) and
// the destination of its read at dstOff(i); the target's region receives
// slot i's write at remoteOff(i), and its message at recvOff(i), apart
// from the writes. From childArea on, the regions are the killable
// child's, for its own traffic.
const (
	slots      = 8
	slotSize   = 4096
	regionSize = 5 * slots * slotSize
	childArea  = 3 * slots * slotSize
	opsPerUnit = 5 // write, atomic write, flush, read, send
	sqDepth    = slots * opsPerUnit

	usagePoster = rpma.UsageReadDst | rpma.UsageWriteSrc | rpma.UsageSend
	usageTarget = rpma.UsageReadSrc | rpma.UsageWriteDst | rpma.UsageFlushTypeVisibility | rpma.UsageRecv

	// cycleTimeout bounds a cycle; only a hang reaches it.
	cycleTimeout = 3 * time.Minute
	// connectFor is how long a cycle retries connecting: after a link
	// flap or a new device the first attempts may time out while the
	// neighbour and route come back.
	connectFor = 60 * time.Second
	// strandWait is how long a fault's drain waits for another
	// completion before it settles what is still in flight; rxe flushes
	// everything within milliseconds, siw's stranded operations never
	// come.
	strandWait = 10 * time.Second
	// stuckWait is how long a cycle without a fault waits for a
	// completion before the missing ones are lost.
	stuckWait = 60 * time.Second
	// showWait is how long a fault may go unnoticed (no failed
	// completion, no event) before the cycle stops anyway.
	showWait = 30 * time.Second
	// flapRideOut is how long a connection must keep working after its
	// link came back to count as having ridden the flap out.
	flapRideOut = 3 * time.Second
)

func srcOff(slot int) int    { return slot * slotSize }
func dstOff(slot int) int    { return (slots + slot) * slotSize }
func remoteOff(slot int) int { return slot * slotSize }
func recvOff(slot int) int   { return (2*slots + slot) * slotSize }

// fillPattern fills b with unit's data: the unit number, then a
// pseudo-random stream of it and seed, so that a stale or misplaced slot
// never verifies.
func fillPattern(b []byte, seed, unit uint64) {
	x := seed ^ (unit+1)*0x9E3779B97F4A7C15
	for i := 0; i+8 <= len(b); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	binary.LittleEndian.PutUint64(b, unit)
}

// atomicValue is what unit's atomic write stores at the end of its slot.
func atomicValue(seed, unit uint64) [8]byte {
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], ^(seed + unit))
	return v
}

// msgLen is the length of unit's message: the header and some of the
// slot, varying from unit to unit.
func msgLen(unit uint64) int { return 8 + int(unit*977%(slotSize-8)) }

// cycle is one connection's life: set-up, transfer, fault, teardown.
type cycle struct {
	s       *soaker
	kind    faultKind
	ctx     context.Context
	closers []closer
	// after runs once everything is closed: a removed device is
	// created again there.
	after func()
}

type closer struct {
	what string
	fn   func() error
}

func (c *cycle) push(what string, fn func() error) { c.closers = append(c.closers, closer{what, fn}) }

// close closes what the cycle made, newest first; closing must succeed
// whatever a fault left behind.
func (c *cycle) close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		if err := c.closers[i].fn(); err != nil {
			c.s.problem("cycle %d (%v): close %s: %v", c.s.cycles, c.kind, c.closers[i].what, err)
		}
	}
	c.closers = nil
	if c.after != nil {
		c.after()
	}
}

// cycle runs one cycle and reports whether it was clean: no problem and
// nothing lost.
func (s *soaker) cycle(kind faultKind) bool {
	s.cycles++
	s.mu.Lock()
	problems := len(s.problems)
	s.mu.Unlock()
	lost := len(s.lost)
	ctx, cancel := context.WithTimeout(context.Background(), cycleTimeout)
	defer cancel()
	c := &cycle{s: s, kind: kind, ctx: ctx}
	if kind != noFault {
		s.injected[kind]++
	}
	if kind == peerKill {
		c.child()
	} else {
		c.pair()
	}
	c.close()
	s.mu.Lock()
	clean := len(s.problems) == problems
	s.mu.Unlock()
	return clean && len(s.lost) == lost
}

// side is one end of a cycle's connection.
type side struct {
	peer *rpma.Peer
	buf  []byte
	mr   *rpma.MR
}

func (c *cycle) side(typ rpma.ContextType, usage rpma.Usage) (*side, error) {
	uctx, err := rpma.ContextByAddr(c.ctx, netip.MustParseAddr(c.s.dev.Addr), typ)
	if err != nil {
		return nil, err
	}
	c.push("context", uctx.Close)
	sd := &side{}
	if sd.peer, err = rpma.NewPeer(uctx); err != nil {
		return nil, err
	}
	c.push("peer", sd.peer.Close)
	if sd.buf, err = mr.Alloc(regionSize); err != nil {
		return nil, err
	}
	buf := sd.buf
	c.push("memory", func() error { return mr.Free(buf) })
	if sd.mr, err = sd.peer.RegisterMR(sd.buf, usage); err != nil {
		return nil, err
	}
	c.push("MR", sd.mr.Close)
	return sd, nil
}

// watched is a connection with a goroutine taking its events.
type watched struct {
	c      *rpma.Conn
	name   string
	events chan rpma.ConnEvent
	cancel context.CancelFunc
	done   chan struct{}
	seen   []rpma.ConnEvent
	hungUp bool
}

func (c *cycle) watch(conn *rpma.Conn, name string) *watched {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watched{c: conn, name: name, events: make(chan rpma.ConnEvent, 8), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			ev, err := conn.NextEvent(ctx)
			if err != nil {
				return
			}
			select {
			case w.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	c.push(name+" conn", func() error {
		w.cancel()
		<-w.done
		return w.c.Close()
	})
	return w
}

// poll returns an event that came, if one did.
func (w *watched) poll() (rpma.ConnEvent, bool) {
	select {
	case ev := <-w.events:
		w.seen = append(w.seen, ev)
		return ev, true
	default:
		return rpma.ConnUndefined, false
	}
}

// ended reports whether the connection's closing event came.
func (w *watched) ended() bool {
	for _, ev := range w.seen {
		if ev == rpma.ConnClosed || ev == rpma.ConnLost {
			return true
		}
	}
	return false
}

// hangUp disconnects both ends of a connection, as librpma users do after
// the end or a failure, and waits a while for their closing events. Both
// disconnect before either waits: on rxe an end's closing event comes
// with the answer (DREP) the other end's Disconnect sends. After a fault
// disconnecting may fail (ENXIO on a removed device); closing must not.
// b may be nil, when the other end is not in this process.
func hangUp(s *soaker, a, b *watched) {
	for _, w := range []*watched{a, b} {
		if w == nil || w.hungUp {
			continue
		}
		w.hungUp = true
		if err := w.c.Disconnect(); err != nil {
			s.logf("%s disconnect: %v", w.name, err)
		}
	}
	timeout := time.After(10 * time.Second)
	for _, w := range []*watched{a, b} {
		for w != nil && !w.ended() {
			select {
			case ev := <-w.events:
				w.seen = append(w.seen, ev)
			case <-timeout:
				s.logf("%s: no closing event 10s after disconnecting (saw %v)", w.name, w.seen)
				return
			}
		}
	}
}

// connConfigs are the poster's and the receiver's: the poster's CQ holds
// every operation a full set of slots has in flight.
func connConfigs() (poster, receiver rpma.ConnConfig) {
	poster = rpma.DefaultConnConfig()
	poster.Timeout = 5 * time.Second
	poster.SQSize, poster.CQSize = sqDepth, sqDepth
	receiver = rpma.DefaultConnConfig()
	receiver.Timeout = 5 * time.Second
	receiver.RQSize, receiver.CQSize = slots, slots
	return poster, receiver
}

// pair is a cycle with both ends in this process: the client posts, the
// server is written, read and sent to.
func (c *cycle) pair() {
	s := c.s
	server, err := c.side(rpma.ContextLocal, usageTarget)
	if err != nil {
		s.problem("server side: %v", err)
		return
	}
	client, err := c.side(rpma.ContextRemote, usagePoster)
	if err != nil {
		s.problem("client side: %v", err)
		return
	}
	ep, err := server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(s.dev.Addr), 0))
	if err != nil {
		s.problem("listen: %v", err)
		return
	}
	c.push("endpoint", ep.Close)
	pcfg, rcfg := connConfigs()
	var cc, sc *rpma.Conn
	for start := time.Now(); ; {
		cctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
		cc, sc, err = rpmatest.Connect(cctx, ep, client.peer, &pcfg, &rcfg, nil, server.mr.Descriptor())
		cancel()
		if err == nil {
			break
		}
		s.connRetries++
		if s.listenerDead(ep, err) {
			return
		}
		if time.Since(start) > connectFor || c.ctx.Err() != nil {
			s.problem("cycle %d: no connection in %v: %v", s.cycles, connectFor, err)
			return
		}
		s.logf("cycle %d: connect: %v; again", s.cycles, err)
		time.Sleep(time.Second)
	}
	s.conns++
	tx, rx := c.watch(cc, "client"), c.watch(sc, "server")
	remote, err := rpma.RemoteMRFromDescriptor(cc.PrivateData())
	if err != nil {
		s.problem("descriptor: %v", err)
		return
	}
	e := &engine{cyc: c, s: s, tx: tx, txMR: client.mr, txBuf: client.buf, remote: remote,
		rx: rx, rxMR: server.mr, rxBuf: server.buf}
	switch c.kind {
	case noFault:
		e.units = 20 + uint64(s.rng.IntN(100))
	case linkFlap:
		e.fault = c.linkFlap()
	case deviceRemoval:
		e.fault = c.deviceRemoval()
	}
	e.run()
	hangUp(s, tx, rx)
	if c.kind == noFault && s.atomics && e.clean() {
		c.atomics()
	}
}

// listenerDead reports, after a connect to ep failed with err, whether
// ep's siw listener has died: siw refused the connection (ECONNREFUSED:
// on iWARP the TCP connect runs inside CONNECT) and no socket listens on
// the endpoint's port any more, while the endpoint is open. That is the
// siw listener defect of docs/kernel-notes.md (a connection closed before
// siw accepted it); retrying cannot help, and closing the endpoint reads
// freed kernel memory, which the soak's kernel log check then reports.
func (s *soaker) listenerDead(ep *rpma.Endpoint, err error) bool {
	if s.driver != "siw" || !errors.Is(err, unix.ECONNREFUSED) {
		return false
	}
	addr, aerr := ep.Addr()
	if aerr != nil || netport.Listening(int(addr.Port())) {
		return false
	}
	s.problem("cycle %d: the siw listener on %v no longer listens, its rdma_cm ID open (the siw listener defect, docs/kernel-notes.md): %v", s.cycles, addr, err)
	return true
}

// child is a cycle whose client is a child process (this binary run
// again), killed mid-transfer: this process's server posts to its memory.
func (c *cycle) child() {
	s := c.s
	server, err := c.side(rpma.ContextLocal, usagePoster|usageTarget)
	if err != nil {
		s.problem("server side: %v", err)
		return
	}
	ep, err := server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(s.dev.Addr), 0))
	if err != nil {
		s.problem("listen: %v", err)
		return
	}
	c.push("endpoint", ep.Close)
	addr, err := ep.Addr()
	if err != nil {
		s.problem("endpoint address: %v", err)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		s.problem("%v", err)
		return
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+addr.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.problem("%v", err)
		return
	}
	if err := cmd.Start(); err != nil {
		s.problem("start the child: %v", err)
		return
	}
	killed := false
	c.push("child", func() error {
		cmd.Process.Kill()
		err := cmd.Wait()
		if !killed {
			s.logf("child: %v; stderr:\n%s", err, stderr.String())
		}
		return nil
	})
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	pcfg, _ := connConfigs()
	rctx, cancel := context.WithTimeout(c.ctx, connectFor)
	defer cancel()
	req, err := ep.NextConnRequest(rctx, &pcfg)
	if err != nil {
		s.problem("cycle %d: no request from the child: %v; its stderr:\n%s", s.cycles, err, stderr.String())
		return
	}
	remote, err := rpma.RemoteMRFromDescriptor(req.PrivateData())
	if err != nil {
		req.Close()
		s.problem("child's descriptor: %v", err)
		return
	}
	conn, err := req.Connect(server.mr.Descriptor())
	if err != nil {
		s.problem("accept the child: %v", err)
		return
	}
	c.push("server conn", conn.Close)
	// The event is taken before the watcher starts: two callers of
	// NextEvent would race for it.
	if err := rpmatest.WantEvent(rctx, conn, rpma.ConnEstablished); err != nil {
		s.problem("child's connection: %v", err)
		return
	}
	tx := c.watch(conn, "server")
	select {
	case l := <-lines:
		if l != "established" {
			s.problem("child said %q; stderr:\n%s", l, stderr.String())
			return
		}
	case <-rctx.Done():
		s.problem("child silent: %v; stderr:\n%s", rctx.Err(), stderr.String())
		return
	}
	s.childConns++
	e := &engine{cyc: c, s: s, tx: tx, txMR: server.mr, txBuf: server.buf, remote: remote}
	e.fault = &fault{fire: func() error {
		killed = true
		return cmd.Process.Kill()
	}}
	e.run()
	hangUp(s, tx, nil)
}

// fault is what a cycle does mid-transfer, and what must happen before
// the connection is hung up.
type fault struct {
	fire         func() error
	beforeHangUp func()
	// over, when set, reports that the fault has passed long enough ago
	// that a connection still working has ridden it out: siw on Linux
	// 6.12 keeps its connections through a short link flap (its
	// NETDEV_GOING_DOWN no longer moves the QPs to ERROR), and TCP
	// carries on once the link is back.
	over func() bool
}

// linkFlap sets the device's netdev down, and up again 1 to 4 s later.
// The connection is hung up only once the link is back: on rxe a DREQ
// sent while the link is down breaks the device's connection manager
// (docs/kernel-notes.md).
func (c *cycle) linkFlap() *fault {
	s := c.s
	downFor := time.Second + time.Duration(s.rng.Int64N(int64(3*time.Second)))
	up := make(chan error, 1)
	var fired bool
	var upAt atomic.Int64 // UnixNano, once the link is up again
	waitUp := func() {
		if !fired {
			return
		}
		fired = false
		if err := <-up; err != nil {
			s.problem("%s up: %v", s.dev.Netdev, err)
		}
	}
	// Whatever happens, the link is up before the cycle ends.
	c.push("link", func() error { waitUp(); return nil })
	return &fault{
		fire: func() error {
			if err := rtnl.SetLink(s.dev.Netdev, false); err != nil {
				return err
			}
			fired = true
			time.AfterFunc(downFor, func() {
				err := rtnl.SetLink(s.dev.Netdev, true)
				upAt.Store(time.Now().UnixNano())
				up <- err
			})
			return nil
		},
		beforeHangUp: waitUp,
		over: func() bool {
			at := upAt.Load()
			return at != 0 && time.Since(time.Unix(0, at)) > flapRideOut
		},
	}
}

// deviceRemoval deletes the RDMA device (rdma link delete), which waits
// until the process has closed everything on it, and creates it again
// once the cycle has closed all.
func (c *cycle) deviceRemoval() *fault {
	s := c.s
	deleted := make(chan error, 1)
	fired := false
	c.after = func() {
		if !fired {
			return
		}
		select {
		case err := <-deleted:
			if err != nil {
				s.problem("rdma link delete %s: %v", s.dev.Name, err)
				return
			}
		case <-time.After(60 * time.Second):
			s.problem("rdma link delete %s still waits 60s after the cycle closed everything", s.dev.Name)
			return
		}
		if err := s.addDevice(); err != nil {
			s.problem("device again: %v", err)
		}
	}
	return &fault{fire: func() error {
		fired = true
		go func() {
			c, err := rdmanl.Dial()
			if err == nil {
				err = c.LinkDel(s.dev.Name)
				c.Close()
			}
			deleted <- err
		}()
		return nil
	}}
}

// engine moves units of verified work over a connection: tx posts to the
// peer's region remote and, when rx is the peer's connection in this
// process, sends to its receives. Without a fault it does units units;
// with one it goes on until the fault shows.
type engine struct {
	cyc    *cycle
	s      *soaker
	tx     *watched
	txMR   *rpma.MR
	txBuf  []byte
	remote *rpma.RemoteMR
	rx     *watched // nil: the peer is not ours, and nothing is sent
	rxMR   *rpma.MR
	rxBuf  []byte

	units uint64 // without a fault
	fault *fault

	sq, rq      *ledger
	slotBusy    [slots]int // operations of the slot in flight
	posted      uint64     // units posted
	recvPosted  uint64
	recvDone    uint64
	posting     bool
	firedAt     time.Time
	shown       bool // the fault showed: a failure or an event
	unexpected  bool // something failed without a fault
	txOK        int
	faultAfter  int // successful completions before the fault fires
	lastAt      time.Time
	lostAtStart int
	scratch     [slotSize]byte
}

func (e *engine) clean() bool { return !e.unexpected && len(e.s.lost) == e.lostAtStart }

// limit is how many units the engine may post.
func (e *engine) limit() uint64 {
	if e.fault != nil {
		return 1 << 62
	}
	return e.units
}

func (e *engine) run() {
	s := e.s
	e.lostAtStart = len(s.lost)
	e.sq = newLedger("sq", 0)
	e.rq = newLedger("rq", 1<<63)
	e.sq.doubleFlush = s.driver == "siw"
	e.posting = true
	e.faultAfter = 20 + s.rng.IntN(400)
	e.lastAt = time.Now()
	wc := make([]cq.WC, sqDepth)
	hungUp := false
	for {
		for e.posting && e.rx != nil && e.recvPosted < e.limit() && e.recvPosted-e.recvDone < slots {
			e.postRecv()
		}
		for e.posting && e.posted < e.limit() && e.slotBusy[e.posted%slots] == 0 &&
			(e.rx == nil || e.posted < e.recvPosted) {
			e.postUnit()
		}
		n := e.reap(e.tx, wc, e.onSend)
		if e.rx != nil {
			n += e.reap(e.rx, wc, e.onRecv)
		}
		if n > 0 {
			e.lastAt = time.Now()
		}
		if e.fault != nil && e.firedAt.IsZero() && e.txOK >= e.faultAfter {
			e.fire()
		}
		for _, w := range []*watched{e.tx, e.rx} {
			if w == nil {
				continue
			}
			if ev, ok := w.poll(); ok {
				e.saw(fmt.Sprintf("%s event %v", w.name, ev))
				if e.firedAt.IsZero() {
					e.unexpectedf("%s: event %v without a fault", w.name, ev)
				}
			}
		}
		switch {
		case e.firedAt.IsZero() || e.shown:
		case e.fault.over != nil && e.fault.over():
			e.shown = true // once
			s.noEffect[e.cyc.kind]++
			e.note(fmt.Sprintf("nothing seen: the connection carried on %v after the link came back", flapRideOut))
			e.posting = false
		case time.Since(e.firedAt) > showWait:
			e.shown = true // once
			s.noEffect[e.cyc.kind]++
			e.note("nothing seen within " + showWait.String())
			e.posting = false
		}
		if e.posting && e.fault == nil && e.posted == e.units {
			e.posting = false
		}
		inFlight := len(e.sq.inFlight) + len(e.rq.inFlight)
		faulted := !e.firedAt.IsZero() || e.unexpected
		if !e.posting && faulted && !hungUp {
			// Stop, then hang up as a librpma user does after a
			// failure, so that the QPs flush what is left.
			hungUp = true
			if e.fault != nil && e.fault.beforeHangUp != nil {
				e.fault.beforeHangUp()
			}
			hangUp(s, e.tx, e.rx)
			e.lastAt = time.Now()
			continue
		}
		if !e.posting && inFlight == 0 {
			break
		}
		switch wait := time.Since(e.lastAt); {
		case !e.posting && faulted && wait > strandWait,
			wait > stuckWait,
			e.cyc.ctx.Err() != nil:
			if !faulted {
				e.unexpectedf("%d operations in flight %v after the last completion, without a fault", inFlight, wait.Round(time.Second))
			}
			e.settle(faulted)
			return
		}
		if n == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	e.settle(false)
}

// settle ends the ledgers and adds them to the worker's counts. siw may
// strand the last operations once its QP failed; rxe never does.
func (e *engine) settle(faulted bool) {
	strand := faulted && e.s.driver == "siw"
	for _, l := range []*ledger{e.sq, e.rq} {
		l.settle(strand)
		e.s.doubled += l.doubled
		if l == e.rq {
			e.s.strandedRecv += l.stranded
		} else {
			e.s.stranded += l.stranded
		}
		e.s.lost = append(e.s.lost, l.lost...)
		for _, m := range l.lost {
			e.s.problem("cycle %d (%v): lost: %s", e.s.cycles, e.cyc.kind, m)
		}
	}
	if e.sq.stranded > 0 {
		e.note("sends stranded")
	}
	if e.rq.stranded > 0 {
		e.note("receives stranded")
	}
	if e.sq.doubled > 0 {
		e.note("a read flushed twice")
	}
}

func (e *engine) fire() {
	e.firedAt = time.Now()
	if err := e.fault.fire(); err != nil {
		e.s.problem("cycle %d: inject %v: %v", e.s.cycles, e.cyc.kind, err)
		e.posting = false
	}
}

// saw records how the fault showed, the first time.
func (e *engine) saw(what string) {
	e.posting = false
	if e.shown {
		return
	}
	e.shown = true
	if !e.firedAt.IsZero() {
		e.note(what)
	}
}

func (e *engine) note(what string) { e.s.faultNotes[e.cyc.kind.String()+": "+what]++ }

func (e *engine) unexpectedf(format string, args ...any) {
	e.unexpected = true
	e.posting = false
	e.s.problem("cycle %d (%v): %s", e.s.cycles, e.cyc.kind, fmt.Sprintf(format, args...))
}

// post posts one operation of unit on slot through do, and reports
// whether the unit may go on.
func (e *engine) post(l *ledger, kind opKind, slot int, unit uint64, do func(op rpma.Op) error) bool {
	id := l.id()
	err := do(rpma.Op{Flags: rpma.CompletionAlways, Context: id})
	if err == nil || errors.Is(err, unix.ENOTCONN) {
		// A post whose doorbell met a failed QP (siw: ENOTCONN) has its
		// request in the ring already: it is in flight.
		l.posted(id, opInfo{kind: kind, slot: slot, unit: unit})
		if kind != opRecv {
			e.slotBusy[slot]++
		}
	}
	if err == nil {
		return true
	}
	if e.firedAt.IsZero() {
		e.unexpectedf("post %v: %v", kind, err)
	} else {
		what := "refused"
		if errors.Is(err, unix.ENOTCONN) {
			what = "ENOTCONN" // in the ring all the same
		}
		e.saw(fmt.Sprintf("%v post %s", kind, what))
	}
	if !errors.Is(err, unix.ENOTCONN) {
		e.s.postRefused++
	}
	e.posting = false
	return false
}

func (e *engine) postUnit() {
	unit := e.posted
	slot := int(unit % slots)
	e.posted++
	src := e.txBuf[srcOff(slot) : srcOff(slot)+slotSize]
	fillPattern(src, e.s.seed, unit)
	clear(e.txBuf[dstOff(slot) : dstOff(slot)+slotSize])
	roff := remoteOff(slot)
	tx := e.tx.c
	_ = e.post(e.sq, opWrite, slot, unit, func(op rpma.Op) error {
		return tx.Write(e.remote, roff, e.txMR, srcOff(slot), slotSize-8, op)
	}) && e.post(e.sq, opAtomicWrite, slot, unit, func(op rpma.Op) error {
		return tx.AtomicWrite(e.remote, roff+slotSize-8, atomicValue(e.s.seed, unit), op)
	}) && e.post(e.sq, opFlush, slot, unit, func(op rpma.Op) error {
		return tx.Flush(e.remote, roff, slotSize, rpma.FlushVisibility, op)
	}) && e.post(e.sq, opRead, slot, unit, func(op rpma.Op) error {
		return tx.Read(e.txMR, dstOff(slot), e.remote, roff, slotSize, op)
	}) && (e.rx == nil || e.post(e.sq, opSend, slot, unit, func(op rpma.Op) error {
		return tx.Send(e.txMR, srcOff(slot), msgLen(unit), op)
	}))
}

func (e *engine) postRecv() {
	r := e.recvPosted
	slot := int(r % slots)
	e.recvPosted++
	clear(e.rxBuf[recvOff(slot) : recvOff(slot)+slotSize])
	e.post(e.rq, opRecv, slot, r, func(op rpma.Op) error {
		return e.rx.c.Recv(e.rxMR, recvOff(slot), slotSize, op.Context)
	})
}

// reap takes the completions of w's CQ and hands each to on.
func (e *engine) reap(w *watched, wc []cq.WC, on func(cq.WC)) int {
	n, err := w.c.CQ().GetWC(wc)
	if err != nil {
		if !errors.Is(err, rpma.ErrNoCompletion) {
			e.unexpectedf("%s GetWC: %v", w.name, err)
		}
		return 0
	}
	for _, c := range wc[:n] {
		on(c)
	}
	return n
}

func (e *engine) failed(w cq.WC, op opInfo) {
	e.s.failed[w.Status]++
	if e.firedAt.IsZero() && !e.unexpected {
		e.unexpectedf("%v of unit %d failed without a fault: %v (vendor error %#x)", op.kind, op.unit, w.Status, w.VendorErr)
		return
	}
	e.saw(fmt.Sprintf("%v %v", op.kind, w.Status))
}

func (e *engine) onSend(w cq.WC) {
	op, ok := e.sq.complete(w)
	if !ok {
		return
	}
	e.slotBusy[op.slot]--
	if w.Status != cq.Success {
		e.failed(w, op)
		return
	}
	e.txOK++
	e.s.ops[op.kind]++
	if op.kind != opRead {
		return
	}
	// The read of the slot sees the write, the atomic write and the
	// flush before it: the responder executes a QP's requests in order.
	src := e.txBuf[srcOff(op.slot) : srcOff(op.slot)+slotSize-8]
	dst := e.txBuf[dstOff(op.slot) : dstOff(op.slot)+slotSize]
	av := atomicValue(e.s.seed, op.unit)
	if !bytes.Equal(dst[:slotSize-8], src) || !bytes.Equal(dst[slotSize-8:], av[:]) {
		e.corrupt(fmt.Sprintf("read of unit %d (slot %d) does not verify: %s", op.unit, op.slot, firstDiff(dst, append(bytes.Clone(src), av[:]...))))
		return
	}
	e.s.bytesVerified += slotSize
}

func (e *engine) onRecv(w cq.WC) {
	op, ok := e.rq.complete(w)
	if !ok {
		return
	}
	e.recvDone++
	if w.Status != cq.Success {
		e.failed(w, op)
		return
	}
	e.s.ops[opRecv]++
	// Receives complete in the order they were posted, and the sends of
	// units in order: receive r holds unit r's message.
	n := msgLen(op.unit)
	got := e.rxBuf[recvOff(op.slot) : recvOff(op.slot)+n]
	want := e.scratch[:slotSize]
	fillPattern(want, e.s.seed, op.unit)
	if int(w.ByteLen) != n || !bytes.Equal(got, want[:n]) {
		e.corrupt(fmt.Sprintf("message %d: %d bytes, want %d: %s", op.unit, w.ByteLen, n, firstDiff(got, want[:n])))
		return
	}
	e.s.bytesVerified += uint64(n)
}

// corrupt records data that came back successfully but wrong: an
// operation lost.
func (e *engine) corrupt(what string) {
	e.s.lost = append(e.s.lost, what)
	e.unexpectedf("%s", what)
}

func firstDiff(got, want []byte) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("byte %d is %#x, want %#x", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
}
