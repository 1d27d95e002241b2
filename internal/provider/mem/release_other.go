//go:build (!amd64 && !arm64) || race

package mem

import "sync/atomic"

// StoreRelease stores v into *p; on architectures without an assembly
// release store, and under the race detector (which cannot see the
// assembly store, and so would miss the ordering it gives), it is Go's
// sequentially consistent Store, which is stronger.
func StoreRelease(p *atomic.Uint32, v uint32) { p.Store(v) }
