package rpma_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// TestLoadSharedConn has goroutines share one connection under the
// documented contract (docs/concurrency.md): each posts RDMA writes of its
// own counter to its own slot of the peer's region and a read back, while
// one goroutine polls the connection's CQ and hands each completion to
// the goroutine that posted it.
func TestLoadSharedConn(t *testing.T) {
	const (
		workers = 16
		rounds  = 50
	)
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		cfg := rpma.DefaultConnConfig()
		cfg.SQSize, cfg.CQSize = 2*workers, 2*workers
		client, server := connect(t, d, &cfg)
		remote, err := rpma.RemoteMRFromDescriptor(client.conn.PrivateData())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		// The poller owns the CQ; done[g] gets goroutine g's completions.
		done := make([]chan cq.WC, workers)
		for g := range done {
			done[g] = make(chan cq.WC, 2)
		}
		pollErr := make(chan error, 1)
		go func() { pollErr <- pollInto(ctx, client.conn.CQ(), done, 2*workers*rounds) }()

		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for g := range workers {
			wg.Go(func() {
				if err := writeRounds(ctx, client, remote, g, rounds, done[g]); err != nil {
					errs <- fmt.Errorf("goroutine %d: %w", g, err)
					cancel()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if err := <-pollErr; err != nil {
			t.Fatal(err)
		}
		for g := range workers {
			if got := binary.LittleEndian.Uint64(server.buf[8*g:]); got != uint64(g)<<32|rounds-1 {
				t.Errorf("slot %d holds %#x, want %#x", g, got, uint64(g)<<32|rounds-1)
			}
		}
	})
}

// writeRounds writes goroutine g's counter into slot g of the peer's
// region rounds times, reading it back after each write: the read must see
// the value just written (RC orders a read behind earlier writes).
func writeRounds(ctx context.Context, s *side, remote *rpma.RemoteMR, g, rounds int, done <-chan cq.WC) error {
	src, dst := 8*g, 2048+8*g // this goroutine's bytes of the local region
	for i := range rounds {
		want := uint64(g)<<32 | uint64(i)
		binary.LittleEndian.PutUint64(s.buf[src:], want)
		id := uint64(g)<<32 | uint64(2*i)
		if err := s.conn.Write(remote, 8*g, s.mr, src, 8, rpma.Op{Flags: rpma.CompletionAlways, Context: id}); err != nil {
			return err
		}
		if err := s.conn.Read(s.mr, dst, remote, 8*g, 8, rpma.Op{Flags: rpma.CompletionAlways, Context: id + 1}); err != nil {
			return err
		}
		for _, wantID := range []uint64{id, id + 1} {
			select {
			case wc := <-done:
				if err := wc.Err(); err != nil || wc.ID != wantID {
					return fmt.Errorf("completion %#x (%v), want %#x", wc.ID, err, wantID)
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if got := binary.LittleEndian.Uint64(s.buf[dst:]); got != want {
			return fmt.Errorf("round %d read back %#x, want %#x", i, got, want)
		}
	}
	return nil
}

// pollInto polls q until n completions arrived, and sends each to the
// channel of the goroutine its ID names (ID >> 32).
func pollInto(ctx context.Context, q *rpma.CQ, done []chan cq.WC, n int) error {
	wc := make([]cq.WC, 8)
	for n > 0 {
		got, err := spin(ctx, q, wc)
		if err != nil {
			return fmt.Errorf("%d completions missing: %w", n, err)
		}
		for _, w := range wc[:got] {
			g := int(w.ID >> 32)
			if g >= len(done) {
				return fmt.Errorf("completion with ID %#x of no goroutine", w.ID)
			}
			done[g] <- w
		}
		n -= got
	}
	return nil
}

// TestLoadManyConnections opens connections between two peers on one
// device, in steps, until a step fails or the most asked for are open,
// and checks each with an RDMA write and a read back. The VM must allow
// at least minConns; the test logs how many it reached.
func TestLoadManyConnections(t *testing.T) {
	steps := map[string][]int{"rxe": {100, 200, 400}, "siw": {25, 50, 100}}
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		counts := steps[d.Driver]
		if counts == nil {
			counts = steps["rxe"] // a hardware device: at least rxe's
		}
		client, server := connectSides(t, d)
		ep, err := server.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ep.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		type pair struct{ c, s *rpma.Conn }
		var open []pair
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for _, p := range open {
				if err := hangUp(ctx, p.c, p.s); err != nil {
					t.Error(err)
				}
			}
		})
		remote, err := rpma.RemoteMRFromDescriptor(server.mr.Descriptor())
		if err != nil {
			t.Fatal(err)
		}
		var stepErr error
		for _, want := range counts {
			for len(open) < want {
				c, s, err := dial(ctx, ep, client, server, nil, nil)
				if err != nil {
					stepErr = fmt.Errorf("connection %d: %w", len(open)+1, err)
					break
				}
				open = append(open, pair{c, s})
			}
			if stepErr != nil {
				break
			}
			// Every connection open so far carries a write and a read back.
			for i, p := range open {
				if err := checkConn(ctx, p.c, client, remote, i); err != nil {
					t.Fatalf("%d connections open, connection %d: %v", len(open), i, err)
				}
			}
			t.Logf("%s: %d connections open at once, each checked", d.Name, len(open))
		}
		if minConns := counts[0]; len(open) < minConns {
			t.Fatalf("only %d connections opened, want at least %d: %v", len(open), minConns, stepErr)
		}
		if stepErr != nil {
			t.Logf("%s: the VM allows %d connections: the next failed: %v", d.Name, len(open), stepErr)
		}
	})
}

// connectSides makes a server and a client peer with a region each on d.
func connectSides(t *testing.T, d testenv.Dev) (client, server *side) {
	server = newSide(t, d, rpma.ContextLocal, rpma.UsageReadSrc|rpma.UsageWriteDst)
	client = newSide(t, d, rpma.ContextRemote, rpma.UsageReadDst|rpma.UsageWriteSrc)
	return client, server
}

// checkConn writes connection i's number into slot i mod 256 of the
// peer's region over c, reads it back, and waits for both completions.
func checkConn(ctx context.Context, c *rpma.Conn, s *side, remote *rpma.RemoteMR, i int) error {
	slot := 8 * (i % 256)
	binary.LittleEndian.PutUint64(s.buf[slot:], uint64(i)+1)
	if err := c.Write(remote, slot, s.mr, slot, 8, rpma.Op{Flags: rpma.CompletionAlways, Context: 1}); err != nil {
		return err
	}
	if err := c.Read(s.mr, 2048+slot%2048, remote, slot, 8, rpma.Op{Flags: rpma.CompletionAlways, Context: 2}); err != nil {
		return err
	}
	var wc [1]cq.WC
	for id := uint64(1); id <= 2; id++ {
		if _, err := spin(ctx, c.CQ(), wc[:]); err != nil {
			return err
		}
		if err := wc[0].Err(); err != nil || wc[0].ID != id {
			return fmt.Errorf("completion %d (%v), want %d", wc[0].ID, err, id)
		}
	}
	if got := binary.LittleEndian.Uint64(s.buf[2048+slot%2048:]); got != uint64(i)+1 {
		return fmt.Errorf("read back %d, want %d", got, i+1)
	}
	return nil
}

// spin polls q until it has completions, and moves up to len(wc) of them
// into wc, or returns ctx's error. It polls without sleeping on the
// channel, so that goroutines polling several CQs need no arming.
func spin(ctx context.Context, q *rpma.CQ, wc []cq.WC) (int, error) {
	for {
		got, err := q.GetWC(wc)
		switch {
		case errors.Is(err, rpma.ErrNoCompletion):
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			time.Sleep(50 * time.Microsecond)
		case err != nil:
			return 0, err
		default:
			return got, nil
		}
	}
}
