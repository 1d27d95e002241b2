package uverbs_test

import (
	"fmt"
	"log"
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

// Move an RC QP to RTS towards a peer whose QP number, PSN and GID came
// over an out-of-band channel (ibv_rc_pingpong uses TCP), choosing the
// local RoCE v2 GID by IP address.
func ExampleQP_Modify() {
	var (
		ctx       *uverbs.Context
		qp        *uverbs.QP
		remoteQPN uint32
		remotePSN uint32
		remoteGID uverbs.GID
		localPSN  uint32
		localIP   = netip.MustParseAddr("192.168.77.1")
	)
	gidIndex, err := ctx.GIDIndex(1, localIP)
	if err != nil {
		log.Fatal(err)
	}
	steps := []struct {
		attr uverbs.QPAttr
		mask uverbs.QPAttrMask
	}{
		{uverbs.QPAttr{State: uverbs.QPSInit, Port: 1, Access: uverbs.LocalWrite | uverbs.RemoteWrite},
			uverbs.QPAttrState | uverbs.QPAttrPKeyIndex | uverbs.QPAttrPort | uverbs.QPAttrAccessFlags},
		{uverbs.QPAttr{State: uverbs.QPSRTR, PathMTU: uverbs.MTU1024, DestQPNum: remoteQPN, RQPSN: remotePSN,
			MaxDestRdAtomic: 1, MinRNRTimer: 12,
			AH: uverbs.AHAttr{IsGlobal: true, Port: 1, GRH: uverbs.GlobalRoute{DGID: remoteGID, SGIDIndex: uint8(gidIndex), HopLimit: 1}}},
			uverbs.QPAttrState | uverbs.QPAttrAV | uverbs.QPAttrPathMTU | uverbs.QPAttrDestQPN |
				uverbs.QPAttrRQPSN | uverbs.QPAttrMaxDestRdAtomic | uverbs.QPAttrMinRNRTimer},
		{uverbs.QPAttr{State: uverbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: localPSN, MaxRdAtomic: 1},
			uverbs.QPAttrState | uverbs.QPAttrTimeout | uverbs.QPAttrRetryCnt | uverbs.QPAttrRNRRetry |
				uverbs.QPAttrSQPSN | uverbs.QPAttrMaxQPRdAtomic},
	}
	for _, s := range steps {
		if err := qp.Modify(&s.attr, s.mask); err != nil {
			log.Fatal(err)
		}
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
