package main

// What the examples' sides acquire, each with its release pushed on an
// undo stack, so that they are released last acquired first, as a chain
// of deferred calls (or the C examples' err_* labels) releases them.

import (
	"context"
	"io"

	"github.com/purerdma/purerdma/rpma"
)

// undo is a stack of releases.
type undo []func()

func (u *undo) push(f func()) { *u = append(*u, f) }

// run releases everything, last acquired first.
func (u *undo) run() {
	for i := len(*u) - 1; i >= 0; i-- {
		(*u)[i]()
	}
	*u = nil
}

// alloc is alloc, freed on run.
func (u *undo) alloc(n int) (*buffer, error) {
	b, err := alloc(n)
	if err == nil {
		u.push(b.free)
	}
	return b, err
}

// register is rpma_mr_reg on p, deregistered on run.
func (u *undo) register(p *peer, b []byte, usage rpma.Usage) (*rpma.MR, error) {
	m, err := p.RegisterMR(b, usage)
	if err == nil {
		u.push(func() { m.Close() })
	}
	return m, err
}

// peer is newPeer at <addr> <port> (args[0] and args[1]).
func (u *undo) peer(ctx context.Context, args []string, typ rpma.ContextType) (*peer, error) {
	p, err := newPeer(ctx, args[0], args[1], typ)
	if err == nil {
		u.push(p.close)
	}
	return p, err
}

// listenAt is how every server starts: the local peer of <addr> <port>,
// what before (when not nil) prepares on it while no client can connect
// yet, and the endpoint listening at the address.
func (u *undo) listenAt(ctx context.Context, args []string, before func(p *peer) error) (*peer, *rpma.Endpoint, error) {
	p, err := u.peer(ctx, args, rpma.ContextLocal)
	if err != nil {
		return nil, nil, err
	}
	if before != nil {
		if err := before(p); err != nil {
			return nil, nil, err
		}
	}
	ep, err := p.listen(ctx)
	if err != nil {
		return nil, nil, err
	}
	u.push(func() { ep.Close() })
	return p, ep, nil
}

// offer registers b for usage and packs it, with offset and pcfg, into
// the struct common_data a side sends as its private data.
func (u *undo) offer(p *peer, b []byte, usage rpma.Usage, offset uint16, pcfg *rpma.PeerConfig) ([]byte, error) {
	m, err := u.register(p, b, usage)
	if err != nil {
		return nil, err
	}
	data, err := newCommonData(offset, m, pcfg)
	if err != nil {
		return nil, err
	}
	return data.encode(), nil
}

// connect is client_connect; the connection is disconnected and closed
// (common_disconnect_and_wait_for_conn_close) on run.
func (u *undo) connect(ctx context.Context, p *peer, cfg *rpma.ConnConfig, pdata []byte, stderr io.Writer) (*rpma.Conn, error) {
	conn, err := p.clientConnect(ctx, cfg, pdata, stderr)
	if err == nil {
		u.push(func() { disconnectAndWaitForClose(ctx, conn, stderr) })
	}
	return conn, err
}

// msgBufs is newMsgBufs, closed on run.
func (u *undo) msgBufs(p *peer, n int) (*msgBufs, error) {
	m, err := newMsgBufs(p, n)
	if err == nil {
		u.push(m.close)
	}
	return m, err
}

// acceptWithRecv is rpma_ep_next_conn_req, an rpma_conn_req_recv of n
// bytes of r with wr_id id before the connection exists, and its
// establishment.
func acceptWithRecv(ctx context.Context, ep *rpma.Endpoint, cfg *rpma.ConnConfig, r *rpma.MR, n int, id uint64, pdata []byte, stderr io.Writer) (*rpma.Conn, error) {
	req, err := nextConnRequest(ctx, ep, cfg)
	if err != nil {
		return nil, err
	}
	if err := req.Recv(r, 0, n, id); err != nil {
		req.Close()
		return nil, err
	}
	return establish(ctx, req, pdata, stderr)
}

// serveRegion is the server of 02, 04, 05 and 07: it offers b, registered
// for usage, to one client with offset and pcfg, and hands the accepted
// connection, or the error of accepting it, to then.
func serveRegion(ctx context.Context, args []string, b []byte, usage rpma.Usage, offset uint16, pcfg *rpma.PeerConfig, stderr io.Writer, then func(*rpma.Conn, error) int) int {
	var u undo
	defer u.run()
	p, ep, err := u.listenAt(ctx, args, nil)
	if err != nil {
		return code(err)
	}
	pdata, err := u.offer(p, b, usage, offset, pcfg)
	if err != nil {
		return code(err)
	}
	return then(serverAccept(ctx, ep, nil, pdata, stderr))
}

// clientPeer is how every client starts: the remote peer of <addr> <port>,
// released by the undo stack it returns (which the client runs even when
// err is not nil).
func clientPeer(ctx context.Context, args []string) (*undo, *peer, error) {
	u := &undo{}
	p, err := u.peer(ctx, args, rpma.ContextRemote)
	return u, p, err
}

// registerAndConnect registers b for usage and connects, as the clients
// of 02 and 11 do before they read the server's private data.
func (u *undo) registerAndConnect(ctx context.Context, p *peer, b []byte, usage rpma.Usage, stderr io.Writer) (*rpma.MR, *rpma.Conn, error) {
	m, err := u.register(p, b, usage)
	if err != nil {
		return nil, nil, err
	}
	conn, err := u.connect(ctx, p, nil, nil, stderr)
	return m, conn, err
}
