package main

import (
	"context"
	"syscall"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// setupQP is rping_setup_qp: a PD, a completion channel, one CQ for sends
// and receives, armed, and the QP on id.
func (cb *control) setupQP(id *rdmacm.ID) int {
	var err error
	vctx := id.Context()
	if vctx == nil {
		cb.out.eprintf("ibv_alloc_pd failed\n")
		return int(syscall.ENODEV)
	}
	if cb.pd, err = vctx.AllocPD(); err != nil {
		cb.out.eprintf("ibv_alloc_pd failed\n")
		return errnoOf(err)
	}
	cb.out.debugf("created pd %p\n", cb.pd)
	if cb.cqch, err = cq.NewChannel(vctx); err != nil {
		cb.out.eprintf("ibv_create_comp_channel failed\n")
		cb.freeQP()
		return errnoOf(err)
	}
	cb.out.debugf("created channel %p\n", cb.cqch)
	if cb.cq, err = cq.New(vctx, sqDepth*2, &cq.Options{Channel: cb.cqch}); err != nil {
		cb.out.eprintf("ibv_create_cq failed\n")
		cb.freeQP()
		return errnoOf(err)
	}
	cb.out.debugf("created cq %p\n", cb.cq)
	if err := cb.cq.ReqNotify(false); err != nil {
		cb.out.eprintf("ibv_create_cq failed\n")
		cb.freeQP()
		return errnoOf(err)
	}
	if ret := cb.createQP(id); ret != 0 {
		cb.freeQP()
		return ret
	}
	cb.out.debugf("created qp %p\n", cb.qp)
	return 0
}

// createQP is rping_create_qp: the QP on id with rdma_create_qp, or with
// -q one of rping's own in its PD, moved to INIT on id's port with no
// remote access; rping moves it on with InitQPAttr (selfModifyQP).
func (cb *control) createQP(id *rdmacm.ID) int {
	init := uverbs.QPInit{
		Type: uverbs.RC, SendCQ: cb.cq, RecvCQ: cb.cq,
		Cap: uverbs.QPCap{MaxSendWR: sqDepth, MaxRecvWR: 2, MaxRecvSGE: 1, MaxSendSGE: 1},
	}
	if !cb.o.selfQP {
		if err := id.CreateQP(cb.pd, init); err != nil {
			cb.out.perror("rdma_create_qp", err)
			return -1
		}
		cb.qp = id.QP()
		return 0
	}
	// C creates it in cb->pd, its own PD on the ID's device, where the
	// buffers are registered too.
	qp, err := cb.pd.CreateQP(init)
	if err != nil {
		cb.out.perror("ibv_create_qp", err)
		return -1
	}
	if err := qp.Init(id.Port(), 0); err != nil { // C's ibv_modify_qp to INIT
		cb.out.perror("ibv_modify_qp", err)
		qp.Close()
		return -1
	}
	cb.qp = qp
	return 0
}

// selfModifyQP is rping_self_modify_qp: it moves the -q QP to INIT, RTR
// and RTS with the attributes the kernel computes for id. On iWARP the
// kernel drives RTR and RTS itself and gives no attributes for them; the
// modify is skipped then, as librdmacm does for its own QPs. Like C it
// returns -1 when rdma_init_qp_attr fails and ibv_modify_qp's errno when
// a modify does, and the error.
func (cb *control) selfModifyQP(id *rdmacm.ID) (int, error) {
	for _, s := range []uverbs.QPState{uverbs.QPSInit, uverbs.QPSRTR, uverbs.QPSRTS} {
		attr, mask, err := id.InitQPAttr(s)
		if err != nil {
			return -1, err
		}
		if mask == 0 {
			continue
		}
		if err := cb.qp.Modify(&attr, mask); err != nil {
			return errnoOf(err), err
		}
	}
	return 0, nil
}

// disconnect is rping_disconnect: with -q rping moves its QP to the error
// state itself, which flushes its work, before rdma_disconnect (which
// does that for a QP of the ID).
func (cb *control) disconnect(id *rdmacm.ID) error {
	if cb.o.selfQP && cb.qp != nil {
		if err := cb.qp.Modify(&uverbs.QPAttr{State: uverbs.QPSErr}, uverbs.QPAttrState); err != nil {
			return err
		}
	}
	return id.Disconnect()
}

// freeQP is rping_free_qp. Without -q the QP belongs to the ID, which
// destroys it again (harmlessly) when it closes; with -q it is rping's.
func (cb *control) freeQP() {
	if cb.qp != nil {
		cb.qp.Close()
		cb.qp = nil
	}
	if cb.cq != nil {
		cb.cq.Close()
		cb.cq = nil
	}
	if cb.cqch != nil {
		cb.cqch.Close()
		cb.cqch = nil
	}
	if cb.pd != nil {
		cb.pd.Close()
		cb.pd = nil
	}
}

// postRecv is ibv_post_recv of rq_wr: the whole recv_buf.
func (cb *control) postRecv() error {
	_, err := cb.qp.PostRecv([]uverbs.RecvWR{{SGE: []uverbs.SGE{{Addr: cb.recvMR.Addr(), Length: infoSize, LKey: cb.recvMR.LKey()}}}})
	return err
}

// postSendInfo is ibv_post_send of sq_wr: a signaled SEND of send_buf.
func (cb *control) postSendInfo() error {
	_, err := cb.qp.PostSend([]uverbs.SendWR{{
		Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{{Addr: cb.sendMR.Addr(), Length: infoSize, LKey: cb.sendMR.LKey()}},
	}})
	return err
}

// postRDMA is ibv_post_send of rdma_sq_wr: a signaled RDMA READ or WRITE
// of length bytes of rdma_buf, with the peer's advertised buffer.
func (cb *control) postRDMA(op uverbs.WROpcode, length uint32) error {
	_, err := cb.qp.PostSend([]uverbs.SendWR{{
		Opcode: op, Flags: uverbs.SendSignaled,
		SGE:        []uverbs.SGE{{Addr: cb.rdmaMR.Addr(), Length: length, LKey: cb.rdmaMR.LKey()}},
		RemoteAddr: cb.remote.buf, RKey: cb.remote.rkey,
	}})
	return err
}

// prepare is what both sides do before connecting, as rping's run
// functions do: the QP on id, the buffers, the first receive, and the CQ
// goroutine. release undoes what was done, in C's order; call it even
// when ret is not 0.
func (cb *control) prepare(ctx context.Context, id *rdmacm.ID) (release func(), ret int) {
	var undo []func()
	release = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if ret = cb.setupQP(id); ret != 0 {
		cb.out.eprintf("setup_qp failed: %d\n", ret)
		return release, ret
	}
	undo = append(undo, cb.freeQP)
	if ret = cb.setupBuffers(); ret != 0 {
		cb.out.eprintf("rping_setup_buffers failed: %d\n", ret)
		return release, ret
	}
	undo = append(undo, cb.freeBuffers)
	if err := cb.postRecv(); err != nil {
		ret = errnoOf(err)
		cb.out.eprintf("ibv_post_recv failed: %d\n", ret)
		return release, ret
	}
	cb.startCQThread(ctx)
	return release, 0
}
