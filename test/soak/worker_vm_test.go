package soak_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// faultKind is what a cycle does to its connection mid-transfer.
type faultKind int

const (
	noFault faultKind = iota
	peerKill
	linkFlap
	deviceRemoval
	numKinds
)

func (k faultKind) String() string {
	return [...]string{"none", "peer kill", "link flap", "device removal"}[k]
}

// Fault schedule: a fault after a random gap, the kinds in a shuffled
// round so that a short run still sees each.
const (
	minFaultGap = 4 * time.Second
	maxFaultGap = 16 * time.Second
	// maxProblems stops a worker that keeps failing, so that the summary
	// comes while the problems are still readable.
	maxProblems = 20
	// confirmGrace is how long after the end a worker may run to confirm,
	// with a clean cycle, that it survived its last fault.
	confirmGrace = 3 * time.Minute
	// settleResources bounds the wait for the kernel to free a cycle's
	// objects (rxe drops a QP from its tasks, rdma_cm tears IDs down in
	// work queues, a killed child's objects go with its files).
	settleResources = 30 * time.Second
)

// soaker is the worker of one device.
type soaker struct {
	t      *testing.T
	driver string
	dev    testenv.Dev // the soak's own device
	peer   string      // the other end of the veth pair
	rng    *rand.Rand
	seed   uint64 // of the data patterns

	baseline map[string]uint64 // resource counts with nothing of the soak open
	atomics  bool              // the device has fetch-and-add and compare-and-swap
	kinds    []faultKind       // the rest of the current round

	mu       sync.Mutex // guards problems, read by the test at the end
	problems []string

	// Counters, read by the summary after the worker ended.
	cycles, conns, childConns, cmConns int
	connRetries                        int
	bytesVerified                      uint64
	ops                                map[opKind]int // completed successfully
	failed                             map[cq.Status]int
	postRefused                        int // posts refused after a fault (not posted)
	stranded, strandedRecv             int // operations of the send and receive queues
	doubled                            int // reads siw flushed twice (ledger.doubleFlush)
	lost                               []string
	injected, survived                 map[faultKind]int
	noEffect                           map[faultKind]int // faults no operation or event noticed
	unconfirmed                        []faultKind       // faults not yet followed by a clean cycle
	teardowns, atBaseline              int
	resFirst, resLast                  map[string]uint64
	faultNotes                         map[string]int // what the user saw, by fault: "link flap: event CONNECTION_CLOSED"
}

func newSoaker(t *testing.T, driver string, i int, rng *rand.Rand) *soaker {
	return &soaker{
		t: t, driver: driver, rng: rng, seed: rng.Uint64(),
		dev: testenv.Dev{
			Name:   "soak" + driver,
			Driver: driver,
			Netdev: "soak" + driver + "0",
			Addr:   fmt.Sprintf("192.168.%d.1", 87+i),
		},
		peer:       "soak" + driver + "1",
		ops:        map[opKind]int{},
		failed:     map[cq.Status]int{},
		injected:   map[faultKind]int{},
		survived:   map[faultKind]int{},
		noEffect:   map[faultKind]int{},
		faultNotes: map[string]int{},
	}
}

func (s *soaker) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.t.Logf("%s: PROBLEM: %s", s.driver, msg)
	s.mu.Lock()
	s.problems = append(s.problems, msg)
	s.mu.Unlock()
}

func (s *soaker) failing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.problems) >= maxProblems
}

func (s *soaker) logf(format string, args ...any) {
	s.t.Logf("%s: "+format, append([]any{s.driver}, args...)...)
}

// run makes cycles until end, then until its last fault is confirmed.
func (s *soaker) run(end time.Time, gate *sync.RWMutex) {
	// Setting up and tearing down hold the gate like a cycle: their
	// netlink sockets are no sample's business.
	gate.RLock()
	err := s.setUp()
	gate.RUnlock()
	defer func() {
		gate.RLock()
		s.tearDown()
		gate.RUnlock()
	}()
	if err != nil {
		s.problem("set up: %v", err)
		return
	}
	nextFault := time.Now().Add(s.gap())
	for {
		now := time.Now()
		if s.failing() {
			s.logf("stopping after %d problems", maxProblems)
			return
		}
		if now.After(end) && len(s.unconfirmed) == 0 {
			return
		}
		if now.After(end.Add(confirmGrace)) {
			s.problem("no clean cycle within %v after the end: faults %v not confirmed survived", confirmGrace, s.unconfirmed)
			return
		}
		kind := noFault
		if now.After(nextFault) && now.Before(end) {
			kind = s.nextKind()
			nextFault = now.Add(s.gap())
		}
		gate.RLock()
		clean := s.cycle(kind)
		back := s.checkResources(kind)
		gate.RUnlock()
		switch {
		case kind != noFault && clean && back:
			s.unconfirmed = append(s.unconfirmed, kind)
		case kind == noFault && clean && back:
			// A clean cycle after faults: the device and the process
			// work as before them.
			for _, k := range s.unconfirmed {
				s.survived[k]++
			}
			s.unconfirmed = s.unconfirmed[:0]
		}
	}
}

func (s *soaker) gap() time.Duration {
	return minFaultGap + time.Duration(s.rng.Int64N(int64(maxFaultGap-minFaultGap)))
}

func (s *soaker) nextKind() faultKind {
	if len(s.kinds) == 0 {
		s.kinds = []faultKind{peerKill, linkFlap, deviceRemoval}
		s.rng.Shuffle(len(s.kinds), func(i, j int) { s.kinds[i], s.kinds[j] = s.kinds[j], s.kinds[i] })
	}
	k := s.kinds[0]
	s.kinds = s.kinds[1:]
	return k
}

// setUp makes the soak's veth pair and device, and takes the device's
// resource baseline.
func (s *soaker) setUp() error {
	r, err := rtnl.Dial()
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.AddVeth(s.dev.Netdev, s.peer); err != nil {
		return err
	}
	for _, n := range []string{s.dev.Netdev, s.peer} {
		if err := r.SetUp(n); err != nil {
			return err
		}
	}
	if err := r.AddAddr(s.dev.Netdev, netip.MustParsePrefix(s.dev.Addr+"/24")); err != nil {
		return err
	}
	if err := s.addDevice(); err != nil {
		return err
	}
	uctx, err := rpma.ContextByAddr(context.Background(), netip.MustParseAddr(s.dev.Addr), rpma.ContextLocal)
	if err != nil {
		return err
	}
	attr, err := uctx.QueryDevice()
	uctx.Close()
	if err != nil {
		return err
	}
	s.atomics = attr.AtomicCap != uverbs.AtomicNone
	s.logf("device %s on %s (%s), atomics %v (%v), fw %s", s.dev.Name, s.dev.Netdev, s.dev.Addr, s.atomics, attr.AtomicCap, attr.FWVer)
	s.baseline, err = s.stableResources()
	if err != nil {
		return err
	}
	s.resFirst = s.baseline
	s.logf("resource baseline %s", fmtRes(s.baseline))
	return nil
}

// addDevice creates the RDMA device and waits until it is usable.
func (s *soaker) addDevice() error {
	c, err := rdmanl.Dial()
	if err != nil {
		return err
	}
	err = c.LinkAdd(s.dev.Name, s.dev.Driver, s.dev.Netdev)
	c.Close()
	if err != nil {
		return fmt.Errorf("rdma link add %s: %w", s.dev.Name, err)
	}
	// The uverbs node and the address appear asynchronously.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		uctx, err := rpma.ContextByAddr(ctx, netip.MustParseAddr(s.dev.Addr), rpma.ContextLocal)
		if err == nil {
			return uctx.Close()
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s not usable after 60s: %w", s.dev.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stableResources reads the device's counts until two readings agree.
func (s *soaker) stableResources() (map[string]uint64, error) {
	prev, err := testenv.DeviceResources(s.dev.Name)
	if err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(settleResources); ; {
		time.Sleep(200 * time.Millisecond)
		now, err := testenv.DeviceResources(s.dev.Name)
		if err != nil {
			return nil, err
		}
		if maps.Equal(prev, now) || time.Now().After(deadline) {
			return now, nil
		}
		prev = now
	}
}

// checkResources waits until the device's counts are back at the
// baseline after a cycle's teardown, and reports whether they came back.
func (s *soaker) checkResources(kind faultKind) bool {
	s.teardowns++
	var now map[string]uint64
	var err error
	for deadline := time.Now().Add(settleResources); ; time.Sleep(50 * time.Millisecond) {
		now, err = testenv.DeviceResources(s.dev.Name)
		if err == nil && maps.Equal(now, s.baseline) {
			s.atBaseline++
			s.resLast = now
			return true
		}
		if time.Now().After(deadline) {
			break
		}
	}
	s.resLast = now
	s.problem("cycle %d (%v): resources not back at the baseline %v after %v: %s (%v)",
		s.cycles, kind, fmtRes(s.baseline), settleResources, fmtRes(now), err)
	return false
}

// tearDown deletes the soak's device and veth pair.
func (s *soaker) tearDown() {
	if c, err := rdmanl.Dial(); err == nil {
		// The goal is a device that is gone: a LinkDel that no longer
		// finds it, after the lookup before it did, is looked up again
		// rather than taken as a failure (a 1-minute soak once ended so
		// while the other worker's device was going away).
		for try := 0; try < 3; try++ {
			if _, err := c.DeviceByName(s.dev.Name); err != nil {
				break
			}
			if err := c.LinkDel(s.dev.Name); err != nil && !errors.Is(err, rdmanl.ErrNotFound) {
				s.problem("rdma link delete %s: %v", s.dev.Name, err)
				break
			}
		}
		c.Close()
	}
	if r, err := rtnl.Dial(); err == nil {
		// Up first: a flap may have been cut short by a failure.
		r.SetUp(s.dev.Netdev)
		if err := r.DelLink(s.dev.Netdev); err != nil {
			s.problem("delete %s: %v", s.dev.Netdev, err)
		}
		r.Close()
	}
}

// summary writes the worker's lines and reports whether it passed.
func (s *soaker) summary(b *strings.Builder) bool {
	d := s.driver
	total, failedN := 0, 0
	for _, n := range s.ops {
		total += n
	}
	for _, n := range s.failed {
		failedN += n
	}
	fmt.Fprintf(b, "soak %s: %d cycles, %d connections (%d rpma in-process, %d to a killable child, %d rdmacm for atomics), %d connect retries\n",
		d, s.cycles, s.conns+s.childConns+s.cmConns, s.conns, s.childConns, s.cmConns, s.connRetries)
	fmt.Fprintf(b, "soak %s: %d bytes verified; %d operations completed successfully (%s)\n", d, s.bytesVerified, total, fmtOps(s.ops))
	fmt.Fprintf(b, "soak %s: after faults: %d failed completions %v, %d posts refused; siw's gaps (docs/faults.md): %d sends and %d receives stranded, %d reads flushed twice\n",
		d, failedN, fmtStatuses(s.failed), s.postRefused, s.stranded, s.strandedRecv, s.doubled)
	fmt.Fprintf(b, "soak %s: operations lost (missing, duplicated or not verifying): %d\n", d, len(s.lost))
	for i, l := range s.lost {
		if i == 10 {
			fmt.Fprintf(b, "  ... and %d more\n", len(s.lost)-10)
			break
		}
		fmt.Fprintf(b, "  lost: %s\n", l)
	}
	var inj, surv int
	var kinds []string
	for k := peerKill; k < numKinds; k++ {
		inj += s.injected[k]
		surv += s.survived[k]
		ridden := ""
		if s.noEffect[k] > 0 {
			ridden = fmt.Sprintf(" (%d without a failure or event)", s.noEffect[k])
		}
		kinds = append(kinds, fmt.Sprintf("%v %d/%d%s", k, s.survived[k], s.injected[k], ridden))
	}
	fmt.Fprintf(b, "soak %s: faults injected %d, survived %d (%s)\n", d, inj, surv, strings.Join(kinds, ", "))
	notes := slices.Sorted(maps.Keys(s.faultNotes))
	for _, n := range notes {
		fmt.Fprintf(b, "  seen: %s x%d\n", n, s.faultNotes[n])
	}
	fmt.Fprintf(b, "soak %s: resources back at the baseline after %d of %d teardowns; baseline %s, last %s\n",
		d, s.atBaseline, s.teardowns, fmtRes(s.resFirst), fmtRes(s.resLast))
	s.mu.Lock()
	np := len(s.problems)
	s.mu.Unlock()
	return np == 0 && len(s.lost) == 0 && s.atBaseline == s.teardowns && inj == surv && inj > 0
}

func fmtRes(m map[string]uint64) string {
	if m == nil {
		return "(none)"
	}
	var parts []string
	for _, k := range []string{"pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains([]string{"pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"}, k) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	return strings.Join(parts, " ")
}

func fmtOps(m map[opKind]int) string {
	var parts []string
	for k := opWrite; k <= opCmpSwap; k++ {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%v %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

func fmtStatuses(m map[cq.Status]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%v %d", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
