package main

import (
	"context"
	"time"

	"github.com/purerdma/purerdma/cq"
)

// joinTimeout bounds the wait for the CQ goroutine after a disconnect: C
// joins its CQ thread, which ends when the flushed receive completes.
const joinTimeout = 3 * time.Second

// serverRecv is server_recv.
func (cb *control) serverRecv(wc *cq.WC) int {
	if wc.ByteLen != infoSize {
		cb.out.eprintf("Received bogus data, size %d\n", wc.ByteLen)
		return -1
	}
	cb.remote = decodeInfo(cb.recvBuf)
	cb.out.debugf("Received rkey %x addr %x len %d from peer\n", cb.remote.rkey, cb.remote.buf, cb.remote.size)
	if s := cb.getState(); s <= connected || s == rdmaWriteComplete {
		cb.setState(rdmaReadAdv)
	} else {
		cb.setState(rdmaWriteAdv)
	}
	return 0
}

// clientRecv is client_recv.
func (cb *control) clientRecv(wc *cq.WC) int {
	if wc.ByteLen != infoSize {
		cb.out.eprintf("Received bogus data, size %d\n", wc.ByteLen)
		return -1
	}
	if cb.getState() == rdmaReadAdv {
		cb.setState(rdmaWriteAdv)
	} else {
		cb.setState(rdmaWriteComplete)
	}
	return 0
}

// cqEventHandler is rping_cq_event_handler: it polls the CQ empty. It
// returns 1 when it saw flushed work, an error status, or 0.
func (cb *control) cqEventHandler() int {
	var wcs [1]cq.WC
	flushed := 0
	ret := 0
	for {
		n, err := cb.cq.Poll(wcs[:])
		if err != nil {
			cb.out.eprintf("poll error %d\n", -errnoOf(err))
			ret = -1
			break
		}
		if n == 0 {
			return flushed
		}
		wc := &wcs[0]
		if wc.Status != cq.Success {
			if wc.Status == cq.WRFlushErr {
				flushed = 1
				continue
			}
			cb.out.eprintf("cq completion failed status %d\n", int(wc.Status))
			ret = -1
			break
		}
		switch wc.Opcode {
		case cq.OpSend:
			cb.out.debugf("send completion\n")
			continue
		case cq.OpRDMAWrite:
			cb.out.debugf("rdma write completion\n")
			cb.setState(rdmaWriteComplete)
			cb.post()
			continue
		case cq.OpRDMARead:
			cb.out.debugf("rdma read completion\n")
			cb.setState(rdmaReadComplete)
			cb.post()
			continue
		case cq.OpRecv:
			cb.out.debugf("recv completion\n")
			if cb.server {
				ret = cb.serverRecv(wc)
			} else {
				ret = cb.clientRecv(wc)
			}
			if ret != 0 {
				cb.out.eprintf("recv wc error: %d\n", ret)
				break
			}
			if err := cb.postRecv(); err != nil {
				ret = errnoOf(err)
				cb.out.eprintf("post recv error: %d\n", ret)
				break
			}
			cb.post()
			continue
		default:
			cb.out.debugf("unknown!!!!! completion\n")
			ret = -1
		}
		break
	}
	cb.setState(errorState)
	cb.post()
	return ret
}

// startCQThread starts cq_thread.
func (cb *control) startCQThread(ctx context.Context) {
	ctx, cb.cqCancel = context.WithCancel(ctx)
	cb.cqDone = make(chan struct{})
	go cb.cqThread(ctx)
}

// cqThread is cq_thread: it sleeps on the completion channel, re-arms the
// CQ and handles what it holds, until flushed work or an error.
func (cb *control) cqThread(ctx context.Context) {
	defer close(cb.cqDone)
	cb.out.debugf("cq_thread started.\n")
	for {
		c, err := cb.cqch.Wait(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			cb.out.eprintf("Failed to get cq event!\n")
			return
		}
		if c != cb.cq {
			cb.out.eprintf("Unknown CQ!\n")
			return
		}
		if err := cb.cq.ReqNotify(false); err != nil {
			cb.out.eprintf("Failed to set notify!\n")
			return
		}
		if cb.cqEventHandler() != 0 {
			return
		}
	}
}

// joinCQThread is pthread_join of the CQ thread, which ends by itself on
// the flushed receive; it is cancelled if it does not within joinTimeout.
func (cb *control) joinCQThread() {
	if cb.cqDone == nil {
		return
	}
	if !cb.out.fatal.Load() {
		select {
		case <-cb.cqDone:
		case <-time.After(joinTimeout):
		}
	}
	cb.cancelCQThread()
}

// cancelCQThread is pthread_cancel and pthread_join.
func (cb *control) cancelCQThread() {
	if cb.cqDone == nil {
		return
	}
	cb.cqCancel()
	<-cb.cqDone
	cb.cqDone = nil
}
