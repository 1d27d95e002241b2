package mr_test

import (
	"fmt"
	"log"

	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// Allocate memory outside the Go heap and register it for remote reads
// and writes. The keys go to the peer; the memory is freed only after the
// region is deregistered.
func ExampleRegister() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	buf, err := mr.Alloc(64 << 10)
	if err != nil {
		log.Fatal(err)
	}
	region, err := mr.Register(pd, buf, uverbs.LocalWrite|uverbs.RemoteRead|uverbs.RemoteWrite)
	if err != nil {
		log.Fatal(err) // errors.Is(err, unix.ENOMEM): raise RLIMIT_MEMLOCK
	}
	fmt.Printf("addr %#x rkey %#x\n", region.Addr(), region.RKey())
	if err := region.Close(); err != nil {
		log.Fatal(err)
	}
	if err := mr.Free(buf); err != nil {
		log.Fatal(err)
	}
}

// Go-allocated memory is refused: the collector could free it while the
// device still writes into it.
func ExampleRegister_goHeap() {
	var pd *uverbs.PD
	_, err := mr.Register(pd, make([]byte, 4096), uverbs.LocalWrite)
	fmt.Println(err)
	// Output: mr: register: memory is not from mr.Alloc or mr.Mapped
}

// Allocate and register in one call; one Close deregisters, then frees.
func ExampleAllocRegister() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	buf, err := mr.AllocRegister(pd, 64<<10, uverbs.LocalWrite|uverbs.RemoteWrite)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	fmt.Printf("addr %#x rkey %#x, %d bytes\n", buf.Addr(), buf.RKey(), len(buf.Bytes()))
}

// A pool of receive buffers carved from one registration: each receive
// gets a buffer of its own, its index in the work request ID, and the
// buffer goes back to the pool once its completion has been handled.
func ExampleNewPool() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	pool, err := mr.NewPool(pd, 4096, 64, uverbs.LocalWrite)
	if err != nil {
		log.Fatal(err)
	}
	b, err := pool.Get() // errors.Is(err, mr.ErrPoolEmpty) when all are out
	if err != nil {
		log.Fatal(err)
	}
	wr := uverbs.RecvWR{ID: uint64(b.Index()), SGE: []uverbs.SGE{b.SGE(b.Len())}}
	_ = wr // qp.PostRecv([]uverbs.RecvWR{wr}); on its completion, read b.Bytes()
	pool.Put(b)
	if err := pool.Close(); err != nil { // mr.ErrBuffersOut while any is out
		log.Fatal(err)
	}
}
