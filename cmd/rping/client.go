package main

import (
	"context"
)

// runClient is rping_run_client.
func (cb *control) runClient(ctx context.Context) (ret int) {
	if ret = cb.bindClient(ctx); ret != 0 {
		return ret
	}
	release, ret := cb.prepare(ctx, cb.cmID)
	defer release()
	if ret != 0 {
		return ret
	}
	if ret = cb.connectClient(ctx); ret != 0 {
		cb.out.eprintf("connect error %d\n", ret)
		// C joins its CQ thread here, and hangs when rdma_connect failed
		// at once (siw: a refused TCP connection): nothing flushes the
		// receive. Cancel it instead.
		cb.cancelCQThread()
		return ret
	}
	if ret = cb.testClient(ctx); ret != 0 {
		cb.out.eprintf("rping client failed: %d\n", ret)
	}
	cb.disconnect(cb.cmID)
	cb.joinCQThread()
	return ret
}

// testClient is rping_test_client.
func (cb *control) testClient(ctx context.Context) int {
	ret := 0
	start := byte(firstChar)
	for ping := 0; cb.o.count == 0 || ping < cb.o.count; ping++ {
		cb.setState(rdmaReadAdv)
		start = formatPing(cb.startBuf, ping, start)

		cb.formatSend(cb.startMR)
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		// The server's go ahead after its RDMA READ.
		if !cb.expect(ctx, rdmaWriteAdv, "RDMA_WRITE_ADV") {
			ret = -1
			break
		}
		cb.formatSend(cb.rdmaMR)
		if err := cb.postSendInfo(); err != nil {
			ret = errnoOf(err)
			cb.out.eprintf("post send error %d\n", ret)
			break
		}
		// The server's go ahead after its RDMA WRITE.
		if !cb.expect(ctx, rdmaWriteComplete, "RDMA_WRITE_COMPLETE") {
			ret = -1
			break
		}
		if cb.o.validate > 0 && string(cb.startBuf) != string(cb.rdmaBuf) {
			cb.out.eprintf("data mismatch!\n")
			ret = -1
			break
		}
		if cb.o.verbose > 0 {
			cb.out.printf("ping data: %s\n", cString(cb.rdmaBuf))
		}
	}
	if cb.getState() == disconnected {
		return 0
	}
	return ret
}
