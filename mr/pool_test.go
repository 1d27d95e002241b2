package mr

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/uverbs"
)

// hostPool is a pool over Go memory at a made-up device address: the
// free-list logic without a device.
func hostPool(size, count int) *Pool {
	return newPool(nil, make([]byte, size*count), 0x10000, size, count)
}

// TestPoolLogic walks a pool of three through sequences of Get, Put and
// Close.
func TestPoolLogic(t *testing.T) {
	type step struct {
		op   string // "get", "put N" (the Nth buffer got), "putagain", "close"
		want error  // nil, or what errors.Is must match
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"get all, then empty", []step{{"get", nil}, {"get", nil}, {"get", nil}, {"get", ErrPoolEmpty}, {"get", syscall.ENOBUFS}}},
		{"put makes room", []step{{"get", nil}, {"get", nil}, {"get", nil}, {"put 1", nil}, {"get", nil}, {"get", ErrPoolEmpty}}},
		{"close with buffers out", []step{{"get", nil}, {"close", ErrBuffersOut}, {"close", uverbs.ErrBusy}, {"close", syscall.EBUSY}, {"get", nil}}},
		{"close after all puts", []step{{"get", nil}, {"get", nil}, {"put 0", nil}, {"put 1", nil}, {"close", nil}, {"close", nil}}},
		{"get after close", []step{{"close", nil}, {"get", uverbs.ErrClosed}, {"get", syscall.EBADF}}},
		{"put after close is harmless", []step{{"get", nil}, {"put 0", nil}, {"close", nil}, {"put 0", uverbs.ErrClosed}, {"close", nil}}},
		{"double put", []step{{"get", nil}, {"put 0", nil}, {"put 0", uverbs.ErrInvalid}, {"get", nil}, {"get", nil}, {"get", nil}, {"get", ErrPoolEmpty}}},
		{"foreign buffer", []step{{"putforeign", uverbs.ErrInvalid}, {"putnil", uverbs.ErrInvalid}, {"close", nil}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := hostPool(64, 3)
			other := hostPool(64, 1)
			var got []*PoolBuffer
			for i, s := range tc.steps {
				var err error
				switch {
				case s.op == "get":
					var b *PoolBuffer
					b, err = p.Get()
					if err == nil {
						got = append(got, b)
					} else if b != nil {
						t.Errorf("step %d: Get returned a buffer with %v", i, err)
					}
				case s.op == "close":
					err = p.Close()
				case s.op == "putforeign":
					b, _ := other.Get()
					err = p.Put(b)
				case s.op == "putnil":
					err = p.Put(nil)
				default:
					var n int
					if _, e := fmtSscan(s.op, &n); e != nil {
						t.Fatalf("bad step %q", s.op)
					}
					err = p.Put(got[n])
				}
				if s.want == nil && err != nil || s.want != nil && !errors.Is(err, s.want) {
					t.Fatalf("step %d (%s): %v, want %v", i, s.op, err, s.want)
				}
			}
		})
	}
}

// TestPoolBuffers: the buffers tile the memory without overlap, and each
// reports its own address, length and SGE; after Close, Bytes is nil.
func TestPoolBuffers(t *testing.T) {
	const size, count = 128, 4
	p := hostPool(size, count)
	if p.Len() != count || p.BufferSize() != size || p.Available() != count {
		t.Fatalf("Len %d BufferSize %d Available %d", p.Len(), p.BufferSize(), p.Available())
	}
	var bs []*PoolBuffer
	for i := range count {
		b, err := p.Get()
		if err != nil {
			t.Fatal(err)
		}
		if b.Index() != i || b.Addr() != 0x10000+uint64(i*size) || b.Len() != size || len(b.Bytes()) != size || cap(b.Bytes()) != size {
			t.Errorf("buffer %d: index %d addr %#x len %d cap %d", i, b.Index(), b.Addr(), b.Len(), cap(b.Bytes()))
		}
		if s := b.SGE(size + 1); s.Addr != b.Addr() || s.Length != size {
			t.Errorf("SGE(%d) = %+v", size+1, s)
		}
		if s := b.SGE(10); s.Length != 10 {
			t.Errorf("SGE(10) = %+v", s)
		}
		for j := range b.Bytes() {
			b.Bytes()[j] = byte(i)
		}
		bs = append(bs, b)
	}
	for i, b := range bs {
		for _, v := range b.Bytes() {
			if v != byte(i) {
				t.Fatalf("buffer %d overlaps another", i)
			}
		}
		p.Put(b)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if bs[0].Bytes() != nil || p.Available() != 0 {
		t.Error("Bytes or Available after Close")
	}
}

// TestPoolNoAlloc: Get and Put in the steady state allocate nothing.
func TestPoolNoAlloc(t *testing.T) {
	p := hostPool(64, 8)
	if n := testing.AllocsPerRun(1000, func() {
		a, err := p.Get()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := p.Get()
		p.Put(a)
		p.Put(b)
	}); n != 0 {
		t.Errorf("Get/Put: %v allocations per run, want 0", n)
	}
	for range 8 {
		p.Get()
	}
	if n := testing.AllocsPerRun(100, func() { p.Get() }); n != 0 {
		t.Errorf("Get on an empty pool: %v allocations per run, want 0", n)
	}
}

// TestPoolConcurrent has goroutines take and give back buffers while
// another closes the pool (run with -race): no buffer is out twice, Close
// succeeds only at a moment when all are back (a Put never finds the pool
// closed), and Get fails from then on.
func TestPoolConcurrent(t *testing.T) {
	const count, workers, rounds = 8, 6, 2000
	p := hostPool(16, count)
	var owner [count]int32
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				b, err := p.Get()
				if errors.Is(err, ErrPoolEmpty) {
					continue
				}
				if errors.Is(err, uverbs.ErrClosed) {
					return // Close found every buffer in
				}
				if err != nil {
					t.Errorf("Get: %v", err)
					return
				}
				mu.Lock()
				if owner[b.Index()] != 0 {
					t.Errorf("buffer %d handed out twice", b.Index())
				}
				owner[b.Index()] = int32(w + 1)
				mu.Unlock()
				b.Bytes()[0] = byte(w)
				mu.Lock()
				owner[b.Index()] = 0
				mu.Unlock()
				if err := p.Put(b); err != nil {
					t.Errorf("Put: %v", err)
				}
			}
		}()
	}
	closed := make(chan error, 1)
	go func() {
		for {
			err := p.Close()
			if !errors.Is(err, ErrBuffersOut) {
				closed <- err
				return
			}
		}
	}()
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := p.Get(); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
}

// TestPoolBadInput: sizes NewPool refuses before touching the device, and
// a nil Pool.
func TestPoolBadInput(t *testing.T) {
	for _, c := range []struct{ size, count int }{{0, 1}, {1, 0}, {-1, 4}, {1 << 40, 1 << 40}, {1 << 33, 1}} {
		if _, err := NewPool(nil, c.size, c.count, uverbs.LocalWrite); !errors.Is(err, uverbs.ErrInvalid) {
			t.Errorf("NewPool(%d, %d): %v, want ErrInvalid", c.size, c.count, err)
		}
	}
	var p *Pool
	if _, err := p.Get(); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("nil Pool Get: %v", err)
	}
	if err := p.Close(); !errors.Is(err, uverbs.ErrClosed) {
		t.Errorf("nil Pool Close: %v", err)
	}
	if _, err := AllocRegister(nil, 0, uverbs.LocalWrite); !errors.Is(err, uverbs.ErrInvalid) {
		t.Errorf("AllocRegister of 0 bytes: %v", err)
	}
	var b *Buffer
	if err := b.Close(); !errors.Is(err, uverbs.ErrClosed) || b.Bytes() != nil || b.LKey() != 0 {
		t.Errorf("nil Buffer: Close %v", err)
	}
}

// fmtSscan reads the number after "put ".
func fmtSscan(s string, n *int) (int, error) {
	return fmt.Sscanf(s, "put %d", n)
}
