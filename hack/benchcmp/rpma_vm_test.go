package main

import (
	"context"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/perftest"
	"github.com/purerdma/purerdma/internal/testenv"
)

// TestRPMAPairs runs compare's rpma pairs once, Go against Go and C
// against C, and the mixed pairs (the two speak the same private data),
// at 64 bytes with few iterations.
func TestRPMAPairs(t *testing.T) {
	d := testenv.RoCE(t)
	peer := testenv.TestPeer(t, "rpmabench")
	rperf := testenv.ProjectTool(t, "rperf")
	c := &compareOpts{dev: d.Name, rpma: true, rpmaPeer: peer, rpmaAddr: d.Addr, rounds: 1, timeout: time.Minute, rperf: rperf}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const size, iters = 64, 20
	for _, pair := range [][2]string{{"Go", "Go"}, {"C", "C"}, {"C", "Go"}, {"Go", "C"}} {
		for _, test := range perftest.RPMATests {
			start := time.Now()
			var counts runCounts
			r, err := c.runRPMAPairOnce(ctx, pair[0], pair[1], test, size, iters, &counts)
			if err != nil {
				t.Errorf("%s server, %s client, %s: %v", pair[0], pair[1], test, err)
				continue
			}
			// sent_pkts is rxe's counter; a hardware device's are its
			// driver's.
			if counts.iters != iters || d.Driver == "rxe" && counts.counters["sent_pkts"] < uint64(iters) {
				t.Errorf("%s server, %s client, %s: counts %+v", pair[0], pair[1], test, counts)
			}
			// runRPMAPairOnce checked the result: the run asked for, a
			// positive median.
			t.Logf("%s server, %s client: %v (%v)", pair[0], pair[1], r, time.Since(start).Round(time.Millisecond))
		}
	}
}
