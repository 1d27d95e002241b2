//go:build !race

package mem

import (
	"sync/atomic"
	"unsafe"
)

// StoreRelease stores v into *p with release ordering only: every load
// and store before it is visible before v is, which is what handing ring
// slots to the kernel, and giving a lock back, need (the kernel's side
// reads the index with smp_load_acquire). Go's atomic Store is
// sequentially consistent, an XCHG on amd64, and costs a locked
// instruction that rdma-core's release store does not
// (docs/benchmarks-host.md).
//
// On amd64 a plain MOV is a release store (x86-TSO never reorders a store
// with an earlier load or store), so it is one, written in Go so that it
// inlines: an assembly function cost a call, ten instructions, on every
// post and poll. The compiler keeps it after the caller's earlier
// accesses: its scheduler orders every load before the store that
// follows it in the memory chain, and stores in their chain's order
// (cmd/compile/internal/ssa/schedule.go, "any load must come before the
// following store"), and it moves no memory operation between blocks
// (tighten.go skips values with a memory argument); docs/memory-ordering.md.
// Loads of *p elsewhere stay atomic. Under the race detector, which
// would not see this store's ordering, it is Go's Store.
func StoreRelease(p *atomic.Uint32, v uint32) {
	*(*uint32)(unsafe.Pointer(p)) = v
}
