package rpma_test

// The man pages' error cases that need a device, on rxe and siw; see
// errors_test.go for the host cases and the cases with no Go equivalent.

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// unroutable is TEST-NET-1 (RFC 5737): no interface of the VM has it,
// and the VM has no route to it.
var unroutable = netip.MustParseAddr("192.0.2.1")

// TestErrCasesPeer covers the cases that need a peer and a region but no
// connection: rpma_utils_get_ibv_context, rpma_mr_reg, rpma_mr_advise,
// rpma_ep_listen, rpma_ep_next_conn_req, rpma_conn_req_new,
// rpma_conn_req_recv, rpma_conn_req_connect, rpma_conn_cfg_set_timeout,
// rpma_srq_new and rpma_srq_recv.
func TestErrCasesPeer(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		s := newSide(t, d, rpma.ContextLocal, rpma.UsageReadSrc|rpma.UsageWriteDst|rpma.UsageRecv)
		adviseCase, adviseWant := "rpma_mr_advise: not supported by the system", rpma.ErrUnsupported
		if s.peer.ODP() {
			// An ODP device (6.18's rxe) has ADVISE_MR; for a region
			// not registered on demand it answers EFAULT, which
			// librpma reads as RPMA_E_INVAL.
			adviseCase, adviseWant = "rpma_mr_advise: the region is not on demand", rpma.ErrInvalid
		}
		c := newSide(t, d, rpma.ContextRemote, rpma.UsageReadDst|rpma.UsageRecv)
		ep, err := s.peer.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ep.Close() })
		addr, err := ep.Addr()
		if err != nil {
			t.Fatal(err)
		}
		srq, err := s.peer.NewSRQ(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := srq.Close(); err != nil {
				t.Errorf("SRQ close: %v", err)
			}
		})
		// Advise logs its ErrUnsupported at LogError.
		rpma.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
		t.Cleanup(func() { rpma.SetLogger(nil) })

		runErrCases(t, []errCase{
			// rpma_utils_get_ibv_context(3)
			{"rpma_utils_get_ibv_context: rdma_bind_addr failed", func() error {
				uctx, err := rpma.ContextByAddr(ctx, unroutable, rpma.ContextLocal)
				if err == nil {
					uctx.Close()
				}
				return err
			}, rpma.ErrProvider},

			// rpma_mr_reg(3)
			{"rpma_mr_reg: ptr is NULL", func() error {
				m, err := s.peer.RegisterMR(nil, rpma.UsageReadSrc)
				if err == nil {
					m.Close()
				}
				return err
			}, rpma.ErrInvalid},
			{"rpma_mr_reg: size equals 0", func() error {
				m, err := s.peer.RegisterMR(s.buf[:0], rpma.UsageReadSrc)
				if err == nil {
					m.Close()
				}
				return err
			}, rpma.ErrInvalid},
			{"Go: rpma_mr_reg: usage 0", func() error {
				m, err := s.peer.RegisterMR(s.buf, 0)
				if err == nil {
					m.Close()
				}
				return err
			}, rpma.ErrInvalid},

			// rpma_mr_advise(3)
			{"rpma_mr_advise: range out of the registration's bounds", func() error {
				return s.mr.Advise(4000, 200, rpma.AdvicePrefetch, 0)
			}, rpma.ErrInvalid},
			{"rpma_mr_advise: negative offset", func() error {
				return s.mr.Advise(-8, 8, rpma.AdvicePrefetch, 0)
			}, rpma.ErrInvalid},
			{"rpma_mr_advise: the flags are invalid", func() error {
				return s.mr.Advise(0, 8, rpma.AdvicePrefetch, rpma.AdviseFlags(2))
			}, rpma.ErrInvalid},
			{adviseCase, func() error {
				return s.mr.Advise(0, 4096, rpma.AdvicePrefetchWrite, rpma.AdviseFlush)
			}, adviseWant},

			// rpma_ep_listen(3)
			{"rpma_ep_listen: addr == NULL", func() error {
				_, err := s.peer.Listen(netip.AddrPort{})
				return err
			}, rpma.ErrInvalid},
			{"rpma_ep_listen: rdma_bind_addr failed (address not local)", func() error {
				e, err := s.peer.Listen(netip.AddrPortFrom(unroutable, 0))
				if err == nil {
					e.Close()
				}
				return err
			}, rpma.ErrProvider},

			// rpma_ep_next_conn_req(3)
			{"rpma_ep_next_conn_req: no next connection request available", func() error {
				req, err := ep.TryNextConnRequest(nil)
				if err == nil {
					req.Close()
				}
				return err
			}, rpma.ErrNoEvent},

			// rpma_conn_req_new(3)
			{"rpma_conn_req_new: addr == NULL", func() error {
				_, err := c.peer.NewConnRequest(ctx, netip.AddrPort{}, nil)
				return err
			}, rpma.ErrInvalid},
			{"rpma_conn_req_new: port == NULL", func() error {
				_, err := c.peer.NewConnRequest(ctx, netip.AddrPortFrom(addr.Addr(), 0), nil)
				return err
			}, rpma.ErrInvalid},

			// rpma_conn_cfg_set_timeout(3): Go checks the field when the
			// config is used.
			{"rpma_conn_cfg_set_timeout: timeout_ms < 0", func() error {
				cfg := rpma.DefaultConnConfig()
				cfg.Timeout = -time.Millisecond
				req, err := c.peer.NewConnRequest(ctx, addr, &cfg)
				if err == nil {
					req.Close()
				}
				return err
			}, rpma.ErrInvalid},
			{"Go: rpma_conn_req_new: negative queue size", func() error {
				cfg := rpma.DefaultConnConfig()
				cfg.SQSize = -1
				req, err := c.peer.NewConnRequest(ctx, addr, &cfg)
				if err == nil {
					req.Close()
				}
				return err
			}, rpma.ErrInvalid},

			// rpma_conn_req_new(3)
			{"rpma_conn_req_new: rdma_resolve_addr failed", func() error {
				if testenv.HasRoute(unroutable) {
					return notHere("this host has a route to " + unroutable.String() + " (a default route): the case needs an address without one, as in the VM")
				}
				cfg := rpma.DefaultConnConfig()
				cfg.Timeout = 200 * time.Millisecond
				req, err := c.peer.NewConnRequest(ctx, netip.AddrPortFrom(unroutable, 7471), &cfg)
				if err == nil {
					req.Close()
				}
				return err
			}, rpma.ErrProvider},

			// rpma_conn_req_recv(3)
			{"rpma_conn_req_recv: src is NULL", func() error {
				req, err := c.peer.NewConnRequest(ctx, addr, nil)
				if err != nil {
					return err
				}
				defer req.Close()
				return req.Recv(nil, 0, 0, 1)
			}, rpma.ErrInvalid},
			{"Go: rpma_conn_req_recv: range outside the region", func() error {
				req, err := c.peer.NewConnRequest(ctx, addr, nil)
				if err != nil {
					return err
				}
				defer req.Close()
				return req.Recv(c.mr, 4000, 200, 1)
			}, rpma.ErrInvalid},

			// rpma_conn_req_connect(3): the request is used up either way.
			{"rpma_conn_req_connect: initiating a connection request failed (active side)", func() error {
				req, err := c.peer.NewConnRequest(ctx, addr, nil)
				if err != nil {
					return err
				}
				conn, err := req.Connect(make([]byte, 256))
				if err == nil {
					conn.Close()
				}
				return err
			}, rpma.ErrProvider},

			// rpma_peer_new(3) with options
			{"Go: NewPeerWithOptions: unknown flush mode", func() error {
				p, err := rpma.NewPeerWithOptions(s.peer.Context(), rpma.PeerOptions{Flush: 7})
				if err == nil {
					p.Close()
				}
				return err
			}, rpma.ErrInvalid},

			// rpma_srq_new(3)
			{"Go: rpma_srq_new: negative rq_size", func() error {
				q, err := s.peer.NewSRQ(&rpma.SRQConfig{RQSize: -1, RCQSize: 1})
				if err == nil {
					q.Close()
				}
				return err
			}, rpma.ErrInvalid},
			{"Go: rpma_srq_new: negative rcq_size", func() error {
				q, err := s.peer.NewSRQ(&rpma.SRQConfig{RQSize: 1, RCQSize: -1})
				if err == nil {
					q.Close()
				}
				return err
			}, rpma.ErrInvalid},

			// rpma_srq_recv(3)
			{"rpma_srq_recv: dst == NULL && offset != 0", func() error {
				return srq.Recv(nil, 8, 0, 1)
			}, rpma.ErrInvalid},
			{"rpma_srq_recv: dst == NULL && len != 0", func() error {
				return srq.Recv(nil, 0, 8, 1)
			}, rpma.ErrInvalid},
			{"Go: rpma_srq_recv: range outside the region", func() error {
				return srq.Recv(s.mr, 4096, 1, 1)
			}, rpma.ErrInvalid},
		})
	})
}

// TestErrCasesConn covers the cases that need a live connection: the
// operations, rpma_conn_get_compl_fd, rpma_conn_wait and rpma_cq_get_wc.
func TestErrCasesConn(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		client, _ := connect(t, d, nil)
		conn, local := client.conn, client.mr
		remote, err := rpma.RemoteMRFromDescriptor(conn.PrivateData())
		if err != nil {
			t.Fatal(err)
		}
		const ok, always = rpma.CompletionOnError, rpma.CompletionAlways
		// C's flags 0 is RPMA_E_INVAL; Go's 0 means ALWAYS, and what it
		// rejects is a value that is neither flag.
		const badFlags rpma.CompletionFlags = 4
		var src [8]byte
		wc := make([]cq.WC, 4)
		q := conn.CQ()

		runErrCases(t, []errCase{
			// rpma_read(3): Read(dst *MR, doff, src *RemoteMR, soff, n, ...)
			{"rpma_read: flags == 0 (in Go: flags not 0, ON_ERROR or ALWAYS)", func() error { return conn.Read(local, 0, remote, 0, 8, rpma.Op{Flags: badFlags, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_read: dst == NULL && src != NULL", func() error { return conn.Read(nil, 0, remote, 0, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_read: dst == NULL && src_offset != 0", func() error { return conn.Read(nil, 0, nil, 8, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_read: dst == NULL && dst_offset != 0", func() error { return conn.Read(nil, 8, nil, 0, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_read: dst == NULL && len != 0", func() error { return conn.Read(nil, 0, nil, 0, 8, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_read: src == NULL && dst != NULL", func() error { return conn.Read(local, 0, nil, 0, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_read: flags neither ON_ERROR nor ALWAYS", func() error { return conn.Read(local, 0, remote, 0, 8, rpma.Op{Flags: 4, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_read: local range outside the region", func() error { return conn.Read(local, 4090, remote, 0, 8, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_read: remote range outside the region", func() error { return conn.Read(local, 0, remote, 4090, 8, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_read: negative length", func() error { return conn.Read(local, 0, remote, 0, -1, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},

			// rpma_write(3): Write(dst *RemoteMR, doff, src *MR, soff, n, ...)
			{"rpma_write: flags == 0 (in Go: flags not 0, ON_ERROR or ALWAYS)", func() error { return conn.Write(remote, 0, local, 0, 8, rpma.Op{Flags: badFlags, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write: dst == NULL && src != NULL", func() error { return conn.Write(nil, 0, local, 0, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write: dst == NULL && src_offset != 0", func() error { return conn.Write(nil, 0, nil, 8, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write: dst == NULL && dst_offset != 0", func() error { return conn.Write(nil, 8, nil, 0, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write: dst == NULL && len != 0", func() error { return conn.Write(nil, 0, nil, 0, 8, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write: src == NULL && dst != NULL", func() error { return conn.Write(remote, 0, nil, 0, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_write: remote range outside the region", func() error { return conn.Write(remote, 4096, local, 0, 1, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_write: local range outside the region", func() error { return conn.Write(remote, 0, local, 4096, 1, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},

			// rpma_write_with_imm(3)
			{"rpma_write_with_imm: flags == 0 (in Go: flags not 0, ON_ERROR or ALWAYS)", func() error {
				return conn.WriteWithImm(remote, 0, local, 0, 8, 7, rpma.Op{Flags: badFlags, Context: 1})
			}, rpma.ErrInvalid},
			{"rpma_write_with_imm: dst == NULL && src != NULL", func() error { return conn.WriteWithImm(nil, 0, local, 0, 0, 7, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write_with_imm: dst == NULL && src_offset != 0", func() error { return conn.WriteWithImm(nil, 0, nil, 8, 0, 7, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write_with_imm: dst == NULL && dst_offset != 0", func() error { return conn.WriteWithImm(nil, 8, nil, 0, 0, 7, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write_with_imm: dst == NULL && len != 0", func() error { return conn.WriteWithImm(nil, 0, nil, 0, 8, 7, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_write_with_imm: src == NULL && dst != NULL", func() error { return conn.WriteWithImm(remote, 0, nil, 0, 0, 7, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},

			// rpma_atomic_write(3)
			{"rpma_atomic_write: dst is NULL", func() error { return conn.AtomicWrite(nil, 0, src, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_atomic_write: dst_offset is not aligned to 8 bytes", func() error { return conn.AtomicWrite(remote, 7, src, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_atomic_write: flags == 0 (in Go: flags not 0, ON_ERROR or ALWAYS)", func() error { return conn.AtomicWrite(remote, 0, src, rpma.Op{Flags: badFlags, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_atomic_write: remote range outside the region", func() error { return conn.AtomicWrite(remote, 4096, src, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},

			// rpma_flush(3)
			{"rpma_flush: dst is NULL", func() error { return conn.Flush(nil, 0, 8, rpma.FlushVisibility, rpma.Op{Flags: always, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_flush: unknown type value", func() error { return conn.Flush(remote, 0, 8, rpma.FlushType(2), rpma.Op{Flags: always, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_flush: flags are not set (in Go: flags not 0, ON_ERROR or ALWAYS)", func() error {
				return conn.Flush(remote, 0, 8, rpma.FlushVisibility, rpma.Op{Flags: badFlags, Context: 1})
			}, rpma.ErrInvalid},
			{"rpma_flush: PERSISTENT without direct write to pmem", func() error {
				return conn.Flush(remote, 0, 8, rpma.FlushPersistent, rpma.Op{Flags: always, Context: 1})
			}, rpma.ErrUnsupported},
			{"Go: rpma_flush: remote range outside the region", func() error {
				return conn.Flush(remote, 4000, 200, rpma.FlushVisibility, rpma.Op{Flags: always, Context: 1})
			}, rpma.ErrInvalid},

			// rpma_send(3)
			{"rpma_send: flags == 0 (in Go: flags not 0, ON_ERROR or ALWAYS)", func() error { return conn.Send(local, 0, 8, rpma.Op{Flags: badFlags, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_send: src == NULL && offset != 0", func() error { return conn.Send(nil, 8, 0, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_send: src == NULL && len != 0", func() error { return conn.Send(nil, 0, 8, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"Go: rpma_send: range outside the region", func() error { return conn.Send(local, 4000, 200, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},

			// rpma_send_with_imm(3)
			{"rpma_send_with_imm: flags == 0 (in Go: flags not 0, ON_ERROR or ALWAYS)", func() error { return conn.SendWithImm(local, 0, 8, 7, rpma.Op{Flags: badFlags, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_send_with_imm: src == NULL && offset != 0", func() error { return conn.SendWithImm(nil, 8, 0, 7, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},
			{"rpma_send_with_imm: src == NULL && len != 0", func() error { return conn.SendWithImm(nil, 0, 8, 7, rpma.Op{Flags: ok, Context: 1}) }, rpma.ErrInvalid},

			// rpma_recv(3)
			{"rpma_recv: dst == NULL && offset != 0", func() error { return conn.Recv(nil, 8, 0, 1) }, rpma.ErrInvalid},
			{"rpma_recv: dst == NULL && len != 0", func() error { return conn.Recv(nil, 0, 8, 1) }, rpma.ErrInvalid},
			{"Go: rpma_recv: range outside the region", func() error { return conn.Recv(local, 4096, 1, 1) }, rpma.ErrInvalid},

			// rpma_conn_get_compl_fd(3)
			{"rpma_conn_get_compl_fd: the completion event channel is not shared", func() error {
				_, err := conn.CompletionFd()
				return err
			}, rpma.ErrNotSharedChannel},

			// rpma_conn_wait(3)
			{"rpma_conn_wait: the completion event channel is not shared", func() error {
				_, _, err := conn.Wait(ctx)
				return err
			}, rpma.ErrNotSharedChannel},

			// rpma_cq_get_wc(3); nothing was posted, so no completion.
			{"rpma_cq_get_wc: num_entries < 1", func() error { _, err := q.GetWC(wc[:0]); return err }, rpma.ErrInvalid},
			{"rpma_cq_get_wc: wc is NULL", func() error { _, err := q.GetWC(nil); return err }, rpma.ErrInvalid},
			{"rpma_cq_get_wc: no completions available", func() error { _, err := q.GetWC(wc); return err }, rpma.ErrNoCompletion},
			{"rpma_cq_get_wc: no completions available, num_entries 1", func() error { _, err := q.GetWC(wc[:1]); return err }, rpma.ErrNoCompletion},
		})
	})
}

// TestErrCasesSharedChannel covers rpma_cq_wait's SHARED_CHANNEL: the
// CQs of a connection configured with a shared completion channel are
// waited on with Conn.Wait.
func TestErrCasesSharedChannel(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		cfg := rpma.DefaultConnConfig()
		cfg.SharedCompChannel = true
		cfg.RCQSize = rpma.DefaultQueueSize
		client, _ := connect(t, d, &cfg)
		runErrCases(t, []errCase{
			{"rpma_cq_wait: the completion event channel is shared (CQ)", func() error {
				return client.conn.CQ().Wait(ctx)
			}, rpma.ErrSharedChannel},
			{"rpma_cq_wait: the completion event channel is shared (RCQ)", func() error {
				return client.conn.RCQ().Wait(ctx)
			}, rpma.ErrSharedChannel},
		})
	})
}

// TestErrCasesSRQConn covers a receive posted to a connection whose
// receives come from an SRQ: Go's ErrInvalid (C posts it to the QP and
// gets RPMA_E_PROVIDER from the provider; rpma_recv(3) does not list it).
func TestErrCasesSRQConn(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		server := newSide(t, d, rpma.ContextLocal, rpma.UsageRecv)
		client := newSide(t, d, rpma.ContextRemote, rpma.UsageSend)
		srq, err := server.peer.NewSRQ(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := srq.Close(); err != nil {
				t.Errorf("SRQ close: %v", err)
			}
		})
		scfg := rpma.DefaultConnConfig()
		scfg.SRQ = srq
		join(t, d, client, server, nil, &scfg)
		runErrCases(t, []errCase{
			{"Go: rpma_recv: the connection receives through an SRQ", func() error {
				return server.conn.Recv(server.mr, 0, 8, 1)
			}, rpma.ErrInvalid},
		})
	})
}
