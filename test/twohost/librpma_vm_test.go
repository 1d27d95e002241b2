package twohost_test

import (
	"context"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/test/rpmainterop"
)

// peerDesc names the other guest's side in failure messages.
type peerDesc string

func (d peerDesc) String() string { return string(d) }

// TestLibrpma runs test/rpmainterop's exchange across the wire: Debian's
// C librpma (the peer built from test/rpmainterop/testdata/peer.c) in
// one guest, the Go rpma package in the other, in both directions.
func TestLibrpma(t *testing.T) {
	testenv.RequirePair(t)
	t.Run("CServer-GoClient", func(t *testing.T) {
		p := begin(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		const port = "7520"
		if p.Server() {
			srv := rpmainterop.StartCPeer(t, "server", p.Dev.Addr, port)
			srv.WaitLine(t, "listening")
			p.send("listening", port)
			p.recv("done")
			line := srv.WaitLine(t, "server memory: ")
			srv.Wait(t)
			rpmainterop.CheckCServerMemory(t, line, true)
			return
		}
		n, err := strconv.Atoi(p.recv("listening"))
		if err != nil {
			t.Fatal(err)
		}
		server := netip.AddrPortFrom(netip.MustParseAddr(p.Peer), uint16(n))
		// FlushEmulated: C librpma 1.2 registers its memory without the
		// FLUSH access flags a native flush needs.
		rpmainterop.GoClient(t, ctx, netip.MustParseAddr(p.Dev.Addr), server, peerDesc("the C server in guest "+p.PeerName),
			rpma.PeerOptions{Flush: rpma.FlushEmulated})
		p.send("done", "")
	})
	t.Run("GoServer-CClient", func(t *testing.T) {
		p := begin(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if p.Server() {
			s := rpmainterop.ListenGo(t, ctx, netip.MustParseAddr(p.Dev.Addr))
			p.send("listening", strconv.Itoa(int(s.Port)))
			s.Serve(t, ctx, peerDesc("the C client in guest "+p.PeerName))
			s.Check(t)
			p.recv("done")
			return
		}
		cli := rpmainterop.StartCPeer(t, "client", p.Peer, p.recv("listening"))
		cli.Wait(t)
		rpmainterop.CheckCClient(t, cli.String())
		p.send("done", "")
	})
}
