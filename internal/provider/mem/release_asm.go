//go:build (amd64 || arm64) && !race

package mem

import "sync/atomic"

// StoreRelease stores v into *p with release ordering only: every load
// and store before it is visible before v is, which is what handing ring
// slots to the kernel needs (its side reads the index with
// smp_load_acquire). Go's atomic Store is sequentially consistent, an
// XCHG on amd64, and costs a locked instruction per post and per poll
// that rdma-core's release store does not (docs/benchmarks-host.md); Go
// has no release-only store, hence assembly. Loads of *p elsewhere stay
// atomic.
//
//go:noescape
func StoreRelease(p *atomic.Uint32, v uint32)
