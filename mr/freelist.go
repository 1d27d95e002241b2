package mr

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/purerdma/purerdma/internal/verbs"
)

// ErrPoolEmpty is returned by Pool.Get when every buffer is out. It
// matches syscall.ENOBUFS.
var ErrPoolEmpty = verbs.NewSentinel("no free buffer in the pool", syscall.ENOBUFS)

// ErrBuffersOut is returned by Pool.Close while buffers are out (taken by
// Get and not Put back). The pool is in use, as a PD with regions is: it
// is a kind of uverbs.ErrBusy and matches syscall.EBUSY.
var ErrBuffersOut = verbs.NewSentinel("pool buffers are still out", verbs.ErrBusy)

// The errors of the fast paths, made once so that they cost nothing.
var (
	errGetClosed  = fmt.Errorf("mr: pool get: %w", verbs.ErrClosed)
	errGetEmpty   = fmt.Errorf("mr: pool get: %w", ErrPoolEmpty)
	errPutClosed  = fmt.Errorf("mr: pool put: %w", verbs.ErrClosed)
	errPutForeign = fmt.Errorf("mr: pool put: buffer not taken from this pool: %w", verbs.ErrInvalid)
)

// freeList is the pool's bookkeeping without the memory: which of n
// buffers are free, which are out, and whether the pool is closed.
type freeList struct {
	mu     sync.Mutex
	free   []int32 // free indexes, a stack
	out    []bool
	nOut   int
	closed atomic.Bool // set under mu; read without it by Bytes
}

func (l *freeList) init(n int) {
	l.free = make([]int32, n)
	for i := range l.free {
		l.free[i] = int32(n - 1 - i) // Get hands out 0, 1, 2, ... first
	}
	l.out = make([]bool, n)
}

// get takes a free index.
func (l *freeList) get() (int32, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return -1, errGetClosed
	}
	n := len(l.free)
	if n == 0 {
		return -1, errGetEmpty
	}
	i := l.free[n-1]
	l.free = l.free[:n-1]
	l.out[i] = true
	l.nOut++
	return i, nil
}

// put returns index i. After close it does nothing: every buffer was in
// when the pool closed, so this is a buffer put twice.
func (l *freeList) put(i int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return errPutClosed
	}
	if i < 0 || int(i) >= len(l.out) || !l.out[i] {
		return errPutForeign
	}
	l.out[i] = false
	l.nOut--
	l.free = append(l.free, i) // within its capacity: no allocation
	return nil
}

// close closes the list unless buffers are out; closing it again returns
// (false, nil).
func (l *freeList) close() (first bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return false, nil
	}
	if l.nOut > 0 {
		return false, fmt.Errorf("mr: pool close: %w (%d of %d)", ErrBuffersOut, l.nOut, len(l.out))
	}
	l.closed.Store(true)
	return true, nil
}

// available returns the number of free indexes.
func (l *freeList) available() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return 0
	}
	return len(l.free)
}
