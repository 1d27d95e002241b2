package spin

import (
	"sync"
	"testing"
	"time"
)

// TestExclusion: goroutines incrementing a plain counter under the lock
// lose no increment, whichever waiting phase they reach (the holder
// sometimes sleeps, so that waiters reach the sleeping phase too). The
// race detector checks that the lock orders the plain accesses.
func TestExclusion(t *testing.T) {
	var (
		l     Lock
		n     int
		wg    sync.WaitGroup
		procs = 4
		each  = 2000
	)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.Lock()
				n++
				if p == 0 && i%500 == 0 {
					time.Sleep(200 * time.Microsecond)
				}
				l.Unlock()
			}
		}()
	}
	wg.Wait()
	if n != procs*each {
		t.Fatalf("counter %d, want %d", n, procs*each)
	}
}

func TestTryLock(t *testing.T) {
	var l Lock
	if !l.TryLock() {
		t.Fatal("TryLock of a free lock failed")
	}
	if l.TryLock() {
		t.Fatal("TryLock of a held lock succeeded")
	}
	l.Unlock()
	if !l.TryLock() {
		t.Fatal("TryLock after Unlock failed")
	}
}

// TestAllocs: taking and giving back the lock allocates nothing.
func TestAllocs(t *testing.T) {
	var l Lock
	if a := testing.AllocsPerRun(100, func() { l.Lock(); l.Unlock() }); a != 0 {
		t.Fatalf("%v allocations per Lock/Unlock", a)
	}
}

func BenchmarkUncontended(b *testing.B) {
	var l Lock
	for b.Loop() {
		l.Lock()
		l.Unlock()
	}
}
