package main

import (
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// region allocates and registers n bytes.
func (cb *control) region(n int, access uverbs.Access) ([]byte, *mr.MR, error) {
	b, err := mr.Alloc(n)
	if err != nil {
		return nil, nil, err
	}
	m, err := mr.Register(cb.pd, b, access)
	if err != nil {
		mr.Free(b)
		return nil, nil, err
	}
	return b, m, nil
}

// setupBuffers is rping_setup_buffers.
func (cb *control) setupBuffers() int {
	cb.out.debugf("rping_setup_buffers called on cb %p\n", cb)
	remote := uverbs.LocalWrite | uverbs.RemoteRead | uverbs.RemoteWrite
	bufs := []struct {
		buf  *[]byte
		mr   **mr.MR
		size int
		acc  uverbs.Access
		name string
	}{
		{&cb.recvBuf, &cb.recvMR, infoSize, uverbs.LocalWrite, "recv_buf"},
		{&cb.sendBuf, &cb.sendMR, infoSize, 0, "send_buf"},
		{&cb.rdmaBuf, &cb.rdmaMR, cb.o.size, remote, "rdma_buf"},
		{&cb.startBuf, &cb.startMR, cb.o.size, remote, "start_buf"},
	}
	if cb.server {
		bufs = bufs[:3]
	}
	for _, b := range bufs {
		var err error
		if *b.buf, *b.mr, err = cb.region(b.size, b.acc); err != nil {
			cb.out.eprintf("%s reg_mr failed\n", b.name)
			cb.releaseBuffers()
			return errnoOf(err)
		}
	}
	cb.out.debugf("allocated & registered buffers...\n")
	return 0
}

// freeBuffers is rping_free_buffers.
func (cb *control) freeBuffers() {
	cb.out.debugf("rping_free_buffers called on cb %p\n", cb)
	cb.releaseBuffers()
}

func (cb *control) releaseBuffers() {
	for _, b := range []struct {
		buf *[]byte
		mr  **mr.MR
	}{{&cb.recvBuf, &cb.recvMR}, {&cb.sendBuf, &cb.sendMR}, {&cb.rdmaBuf, &cb.rdmaMR}, {&cb.startBuf, &cb.startMR}} {
		if *b.mr != nil {
			(*b.mr).Close()
			*b.mr = nil
		}
		if *b.buf != nil {
			mr.Free(*b.buf)
			*b.buf = nil
		}
	}
}

// formatSend is rping_format_send: advertise buf of region m.
func (cb *control) formatSend(m *mr.MR) {
	info := rdmaInfo{buf: m.Addr(), rkey: m.RKey(), size: uint32(cb.o.size)}
	info.encode(cb.sendBuf)
	cb.out.debugf("RDMA addr %x rkey %x len %d\n", info.buf, info.rkey, info.size)
}
