package rpma

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
)

// fakeSource is a CQ without a device: complete queues a completion, poll
// takes them oldest first, wait sleeps until complete kicks it or err is
// set. Nothing in it allocates once q has its capacity.
type fakeSource struct {
	mu    sync.Mutex
	q     []cq.WC
	kick  chan struct{}
	err   error
	waits int // how often wait slept
}

func newFakeSource() *fakeSource {
	return &fakeSource{q: make([]cq.WC, 0, 1024), kick: make(chan struct{}, 1)}
}

func (f *fakeSource) complete(wc cq.WC) {
	f.mu.Lock()
	f.q = append(f.q, wc)
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// fail makes every wait from now on return err, as a CQ's wait does
// when the connection breaks or closes.
func (f *fakeSource) fail(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *fakeSource) poll(wc []cq.WC) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := copy(wc, f.q)
	f.q = f.q[:copy(f.q, f.q[n:])]
	return n, nil
}

func (f *fakeSource) wait(ctx context.Context) error {
	f.mu.Lock()
	f.waits++
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-f.kick:
	case <-ctx.Done():
		return ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestRouterOwnCompletion has goroutines share one router while a fake
// device completes their operations in an order of its own (newest of
// each batch first): each must get its own completion, whoever polls.
func TestRouterOwnCompletion(t *testing.T) {
	for _, tt := range []struct {
		name              string
		goroutines, depth int
	}{
		{"one goroutine", 1, 4},
		{"more goroutines than slots", 32, 8},
		{"slots to spare", 8, 64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			src := newFakeSource()
			r := newRouter(src, tt.depth, 1)
			posted := make(chan uint64, tt.depth)
			stop := make(chan struct{})
			var dev sync.WaitGroup
			dev.Add(1)
			go func() { // the device: completes what is posted, in reverse batches
				defer dev.Done()
				var batch []uint64
				for {
					select {
					case id := <-posted:
						batch = append(batch, id)
						if len(batch) < 3 && len(posted) > 0 {
							continue
						}
					case <-stop:
						return
					}
					for i := len(batch) - 1; i >= 0; i-- {
						src.complete(cq.WC{ID: batch[i], ByteLen: uint32(batch[i] & slotMask), Status: cq.Success})
					}
					batch = batch[:0]
				}
			}()
			const ops = 200
			errs := make(chan error, tt.goroutines)
			var wg sync.WaitGroup
			for g := range tt.goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range ops {
						i, id, err := r.acquire(ctx)
						if err != nil {
							errs <- err
							return
						}
						posted <- id
						wc, err := r.wait(ctx, i)
						if err != nil {
							errs <- err
							return
						}
						if wc.ID != id || wc.ByteLen != uint32(i) {
							errs <- fmt.Errorf("goroutine %d op %d: got completion %#x (%d), want %#x (%d)", g, k, wc.ID, wc.ByteLen, id, i)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(stop)
			dev.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if got := len(r.free); got != tt.depth {
				t.Errorf("%d free slots at the end, want %d", got, tt.depth)
			}
		})
	}
}

// TestRouterAllocs checks that an operation through the router allocates
// nothing: acquire, complete, wait, with and without the sleep on the
// source.
func TestRouterAllocs(t *testing.T) {
	ctx := testCtx(t)
	src := newFakeSource()
	r := newRouter(src, 4, 4)
	// A device that completes from another goroutine, after the
	// waiter has had time to go to sleep on the source.
	later := make(chan uint64)
	defer close(later)
	go func() {
		for id := range later {
			time.Sleep(time.Millisecond)
			src.complete(cq.WC{ID: id})
		}
	}()
	for _, tt := range []struct {
		name string
		op   func() error
	}{
		{"completion ready", func() error {
			i, id, _ := r.acquire(ctx)
			src.complete(cq.WC{ID: id})
			_, err := r.wait(ctx, i)
			return err
		}},
		{"receive ready", func() error {
			src.complete(cq.WC{ID: idRecv | 1})
			_, err := r.waitRecv(ctx)
			return err
		}},
		{"completion from another goroutine", func() error {
			i, id, _ := r.acquire(ctx)
			later <- id
			_, err := r.wait(ctx, i)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src.mu.Lock()
			waits := src.waits
			src.mu.Unlock()
			var err error
			got := testing.AllocsPerRun(200, func() {
				if e := tt.op(); e != nil {
					err = e
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != 0 {
				t.Errorf("%v allocations per operation, want 0", got)
			}
			src.mu.Lock()
			slept := src.waits > waits
			src.mu.Unlock()
			if tt.name == "completion from another goroutine" && !slept {
				t.Error("the router never slept on the source: the case did not test the sleep")
			}
		})
	}
}

// TestRouterFail breaks the source while goroutines wait in the router:
// each must return the source's error, matchable with errors.Is, and
// later operations get it at once.
func TestRouterFail(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		waiters int
	}{
		{"reset", syscall.ECONNRESET, 8},
		{"closed", ErrClosed, 3},
		{"one waiter", syscall.ECONNRESET, 1},
		// CQ.Wait's error once the connection ended is ErrNoCompletion
		// too, which alone is a wake-up with nothing to poll.
		{"connection ended", errConnEnded, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			src := newFakeSource()
			r := newRouter(src, tt.waiters+1, 4)
			got := make(chan error, tt.waiters+1)
			started := make(chan struct{}, tt.waiters+1)
			for range tt.waiters {
				go func() {
					i, _, err := r.acquire(ctx)
					if err != nil {
						got <- err
						return
					}
					started <- struct{}{}
					_, err = r.wait(ctx, i)
					got <- err
				}()
			}
			go func() { // a receive waiter too
				started <- struct{}{}
				_, err := r.waitRecv(ctx)
				got <- err
			}()
			for range tt.waiters + 1 {
				<-started
			}
			src.fail(tt.err)
			for range tt.waiters + 1 {
				select {
				case err := <-got:
					if !errors.Is(err, tt.err) {
						t.Errorf("waiter returned %v, want %v", err, tt.err)
					}
				case <-ctx.Done():
					t.Fatal("a waiter was left behind")
				}
			}
			if _, _, err := r.acquire(ctx); !errors.Is(err, tt.err) {
				t.Errorf("acquire after the failure = %v, want %v", err, tt.err)
			}
		})
	}
}

// TestRouterContext ends a waiter's context: it returns the context's
// error, the other waiters go on, the abandoned slot comes back when its
// completion arrives, and a stale duplicate of a completion (siw may
// flush a read twice) reaches nobody.
func TestRouterContext(t *testing.T) {
	ctx := testCtx(t)
	src := newFakeSource()
	r := newRouter(src, 2, 1)
	short, cancel := context.WithCancel(ctx)
	ia, ida, _ := r.acquire(short)
	ib, idb, _ := r.acquire(ctx)
	bDone := make(chan error, 1)
	go func() {
		wc, err := r.wait(ctx, ib)
		if err == nil && wc.ID != idb {
			err = fmt.Errorf("got %#x, want %#x", wc.ID, idb)
		}
		bDone <- err
	}()
	cancel()
	if _, err := r.wait(short, ia); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait with a cancelled context = %v", err)
	}
	if len(r.free) != 0 {
		t.Fatal("the abandoned slot is free before its completion")
	}
	src.complete(cq.WC{ID: ida})
	src.complete(cq.WC{ID: idb})
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	// B's wait returned after the poller handed out A's completion, so
	// A's slot is back.
	if len(r.free) != 2 {
		t.Fatalf("%d free slots, want 2", len(r.free))
	}
	i, id, _ := r.acquire(ctx)
	src.complete(cq.WC{ID: ida, Status: cq.WRFlushErr}) // stale: an earlier generation
	src.complete(cq.WC{ID: id, ByteLen: 7})
	wc, err := r.wait(ctx, i)
	if err != nil || wc.ID != id || wc.ByteLen != 7 {
		t.Fatalf("after a stale completion: %+v, %v", wc, err)
	}
}

// TestRouterFull checks that acquire waits while every slot is in flight
// and ends with the context.
func TestRouterFull(t *testing.T) {
	ctx := testCtx(t)
	r := newRouter(newFakeSource(), 1, 1)
	i, _, err := r.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, _, err := r.acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire on a full router = %v", err)
	}
	r.release(i)
	if _, _, err := r.acquire(ctx); err != nil {
		t.Fatal(err)
	}
}
