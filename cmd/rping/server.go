package main

import (
	"context"
	"sync"

	"github.com/purerdma/purerdma/uverbs"
)

// runServer is rping_run_server: one connection.
func (cb *control) runServer(ctx context.Context) int {
	if ret := cb.bindServer(); ret != 0 {
		return ret
	}
	if !cb.wait(ctx) {
		return -1
	}
	if s := cb.getState(); s != connectRequest {
		cb.out.eprintf("wait for CONNECT_REQUEST state %d\n", s)
		return -1
	}
	return cb.serveConnection(ctx, false)
}

// serveConnection runs the accepted connection on cb.child, as the end of
// rping_run_server and rping_persistent_server_thread do, and destroys
// the child ID.
func (cb *control) serveConnection(ctx context.Context, persistent bool) (ret int) {
	defer cb.child.Close()
	release, ret := cb.prepare(ctx, cb.child)
	defer release()
	if ret != 0 {
		return ret
	}
	if ret = cb.accept(ctx); ret != 0 {
		cb.out.eprintf("connect error %d\n", ret)
		cb.cancelCQThread()
		return ret
	}
	ret = cb.testServer(ctx)
	if ret != 0 && !persistent {
		cb.out.eprintf("rping server failed: %d\n", ret)
	}
	cb.disconnect(cb.child)
	cb.joinCQThread()
	if persistent {
		return 0
	}
	return ret
}

// testServer is rping_test_server.
func (cb *control) testServer(ctx context.Context) int {
	ret := -1
	for {
		// The client's source advertisement.
		if !cb.expect(ctx, rdmaReadAdv, "RDMA_READ_ADV") {
			break
		}
		cb.out.debugf("server received sink adv\n")
		if err := cb.postRDMA(uverbs.WRRDMARead, cb.remote.size); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		cb.out.debugf("server posted rdma read req \n")
		if !cb.expect(ctx, rdmaReadComplete, "RDMA_READ_COMPLETE") {
			break
		}
		cb.out.debugf("server received read complete\n")
		if cb.o.verbose > 0 {
			cb.out.printf("server ping data: %s\n", cString(cb.rdmaBuf))
		}
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		cb.out.debugf("server posted go ahead\n")

		// The client's sink advertisement.
		if !cb.expect(ctx, rdmaWriteAdv, "RDMA_WRITE_ADV") {
			break
		}
		cb.out.debugf("server received sink adv\n")
		length := uint32(len(cString(cb.rdmaBuf)) + 1)
		cb.out.debugf("rdma write from lkey %x laddr %x len %d\n", cb.rdmaMR.LKey(), cb.rdmaMR.Addr(), length)
		if err := cb.postRDMA(uverbs.WRRDMAWrite, length); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		if !cb.expect(ctx, rdmaWriteComplete, "RDMA_WRITE_COMPLETE") {
			break
		}
		cb.out.debugf("server rdma write complete \n")
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		cb.out.debugf("server posted go ahead\n")
	}
	if cb.getState() == disconnected {
		return 0
	}
	return ret
}

// clone is clone_cb: the listener's control block for a new connection.
func (cb *control) clone() *control {
	c := newControl(cb.o, cb.out)
	c.setState(cb.getState())
	c.ch, c.cmID, c.child, c.req = cb.ch, cb.cmID, cb.child, cb.req
	return c
}

// runPersistentServer is rping_run_persistent_server: a goroutine per
// connection, until ctx ends or an error.
func (cb *control) runPersistentServer(ctx context.Context, d *dispatcher) int {
	if ret := cb.bindServer(); ret != 0 {
		return ret
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		if !cb.wait(ctx) {
			return -1
		}
		if s := cb.getState(); s != connectRequest {
			cb.out.eprintf("wait for CONNECT_REQUEST state %d\n", s)
			return -1
		}
		c := cb.clone()
		d.set(c.child, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.serveConnection(ctx, true)
		}()
	}
}
