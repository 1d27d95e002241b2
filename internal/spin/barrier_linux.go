package spin

import (
	"sync"

	"golang.org/x/sys/unix"
)

// membarrier(2)'s commands (include/uapi/linux/membarrier.h): the
// private expedited barrier and its registration, both since Linux 4.14.
const (
	membarrierPrivateExpedited         = 1 << 3
	membarrierRegisterPrivateExpedited = 1 << 4
)

// processBarrier runs a full memory barrier on every running thread of
// the process, through membarrier(2), which the process registers for
// once.
type processBarrier struct {
	once sync.Once
	ok   bool
}

// ready registers the process for the barrier, once, and reports whether
// it can run.
func (b *processBarrier) ready() bool {
	b.once.Do(func() { b.ok = membarrier(membarrierRegisterPrivateExpedited) == nil })
	return b.ok
}

// run runs the barrier. After a successful registration the kernel has no
// error for it (only an unregistered process gets EPERM), so it retries
// rather than returns one: the caller must not go on without the barrier.
func (b *processBarrier) run() {
	for membarrier(membarrierPrivateExpedited) != nil {
	}
}

func membarrier(cmd int) error {
	_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, uintptr(cmd), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
