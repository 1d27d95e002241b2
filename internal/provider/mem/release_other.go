//go:build !amd64 || race

package mem

import "sync/atomic"

// StoreRelease stores v into *p with at least release ordering: Go's
// Store, an STLR on arm64 (a release store, as rdma-core's
// atomic_store_explicit(..., memory_order_release) compiles there), and
// sequentially consistent elsewhere and under the race detector.
func StoreRelease(p *atomic.Uint32, v uint32) { p.Store(v) }
