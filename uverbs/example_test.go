package uverbs_test

import (
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net/netip"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// List the RDMA devices, as ibv_devices does.
func ExampleDevices() {
	devs, err := uverbs.Devices()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range devs {
		fmt.Printf("%-16s %s (%s)\n", d.Name, d.NodeGUID, d.Driver)
	}
}

// Open a device and create the objects of an RC queue pair: a protection
// domain, a completion queue, registered memory and the QP itself.
func ExamplePD_CreateQP() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close() // releases everything below as well
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	q, err := cq.New(ctx, 128, nil)
	if err != nil {
		log.Fatal(err)
	}
	buf, err := mr.Alloc(1 << 20) // outside the Go heap
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Free(buf)
	region, err := mr.Register(pd, buf, uverbs.LocalWrite|uverbs.RemoteWrite|uverbs.RemoteRead)
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	qp, err := pd.CreateQP(uverbs.QPInit{
		Type: uverbs.RC, SendCQ: q, RecvCQ: q,
		Cap: uverbs.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 1, MaxRecvSGE: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("QP number", qp.Num())
}

// Connect an RC QP to a peer whose QP number, PSN and GID came over an
// out-of-band channel (ibv_rc_pingpong uses TCP), choosing the local
// RoCE v2 GID by IP address. Each side sends the other its own QP
// number, a random PSN and its GID, and then does the same with the
// other's.
func ExampleQP_ConnectRC() {
	var (
		ctx       *uverbs.Context
		qp        *uverbs.QP // a new RC QP, in RESET
		remoteQPN uint32
		remotePSN uint32
		remoteGID uverbs.GID
		localPSN  = rand.Uint32() & 0xffffff // PSNs have 24 bits
		localIP   = netip.MustParseAddr("192.168.77.1")
	)
	gidIndex, err := ctx.GIDIndex(1, localIP)
	if err != nil {
		log.Fatal(err)
	}
	// INIT first: receives may be posted from there on, before the peer
	// sends anything.
	if err := qp.Init(1, uverbs.RemoteWrite|uverbs.RemoteRead); err != nil {
		log.Fatal(err)
	}
	// ... post receives, exchange numbers with the peer ...
	err = qp.ConnectRC(uverbs.RCPath{
		Port: 1, MTU: uverbs.MTU1024,
		Global: true, DGID: remoteGID, SGIDIndex: uint8(gidIndex), // RoCE routes by GID
		DestQPN: remoteQPN, DestPSN: remotePSN, PSN: localPSN,
		RdAtomic: 1, // one RDMA read or atomic in flight each way
	})
	if te, ok := errors.AsType[*uverbs.TransitionError](err); ok {
		log.Fatalf("QP stuck before %s: %v", te.State, te.Err)
	} else if err != nil {
		log.Fatal(err)
	}
}

// Move a QP to the error state: the device flushes its outstanding work
// requests, each completing with cq.WRFlushErr, after which the QP may
// be destroyed without losing track of any buffer.
func ExampleQP_Modify() {
	var qp *uverbs.QP
	if err := qp.Modify(&uverbs.QPAttr{State: uverbs.QPSErr}, uverbs.QPAttrState); err != nil {
		log.Fatal(err)
	}
}

// Write local memory into the peer's with one signaled RDMA write and
// wait for its completion by polling. The request slice and the
// completion slice are reused, so the loop allocates nothing.
func ExampleQP_PostSend() {
	var (
		qp     *uverbs.QP
		q      *cq.CQ
		region *mr.MR
		raddr  uint64 // the peer's buffer and key, exchanged out of band
		rkey   uint32
	)
	wr := []uverbs.SendWR{{
		ID:         1,
		Opcode:     uverbs.WRRDMAWrite,
		Flags:      uverbs.SendSignaled,
		SGE:        []uverbs.SGE{{Addr: region.Addr(), Length: 4096, LKey: region.LKey()}},
		RemoteAddr: raddr,
		RKey:       rkey,
	}}
	wc := make([]cq.WC, 1)
	if _, err := qp.PostSend(wr); err != nil {
		log.Fatal(err)
	}
	for {
		n, err := q.Poll(wc)
		if err != nil {
			log.Fatal(err)
		}
		if n == 1 {
			break
		}
	}
	if err := wc[0].Err(); err != nil {
		log.Fatal(err)
	}
}

// Give a QP's send side and its CQ's polling to one goroutine, which then
// posts and polls with no lock at all: the fastest data path, for a
// goroutine that owns a connection. Close, Modify and the locked
// methods stay safe from other goroutines; they wait for the owner to
// leave its call.
func ExampleQP_OwnSend() {
	var (
		qp  *uverbs.QP // connected, RTS
		c   *cq.CQ     // its send CQ
		sge uverbs.SGE // registered memory to write from
	)
	sq, err := qp.OwnSend()
	if err != nil {
		log.Fatal(err) // uverbs.ErrBusy: another goroutine owns it
	}
	defer sq.Release()
	poller, err := c.Own()
	if err != nil {
		log.Fatal(err)
	}
	defer poller.Release()
	wr := []uverbs.SendWR{{Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{sge}, RemoteAddr: 0x7f0000000000, RKey: 0x1234}}
	wc := make([]cq.WC, 16)
	for i := range 1000 {
		wr[0].ID = uint64(i)
		if _, err := sq.Post(wr); err != nil {
			log.Fatal(err)
		}
		for {
			n, err := poller.Poll(wc)
			if err != nil {
				log.Fatal(err)
			}
			if n > 0 {
				break
			}
		}
	}
}
