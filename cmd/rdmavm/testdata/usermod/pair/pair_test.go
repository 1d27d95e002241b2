// Package pair is a client/server test across two guests (rdmavm
// -pair): the server in guest a lends a buffer, the client in guest b
// writes into it over the wire between them.
package pair

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
	"github.com/purerdma/purerdma/uverbs/uverbstest"
)

const port = "7471"

const msg = "written across the wire"

func TestAcrossTheWire(t *testing.T) {
	p := uverbstest.RequirePair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if p.Server() {
		serve(ctx, t, net.JoinHostPort(p.Device.Addr, port))
	} else {
		dial(ctx, t, net.JoinHostPort(p.Peer, port))
	}
}

func serve(ctx context.Context, t *testing.T, addr string) {
	l, err := rdmacm.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	buf, err := mr.AllocRegister(l.PD(), 64, uverbs.LocalWrite|uverbs.RemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	private, _ := binary.Append(nil, binary.LittleEndian, rdmacm.Remote{Addr: buf.Addr(), RKey: buf.RKey()})
	l.SetPrivateData(private)
	id, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer id.Close()
	if _, err := id.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.TrimRight(buf.Bytes(), "\x00")); got != msg {
		t.Fatalf("the buffer holds %q, want %q", got, msg)
	}
}

// dial connects to the server, trying again while it is not listening
// yet (the guests boot side by side), and writes msg into its buffer.
func dial(ctx context.Context, t *testing.T, addr string) {
	var id *rdmacm.ID
	for {
		var err error
		if id, err = rdmacm.Dial(ctx, addr); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("dial %s: %v", addr, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer id.Close()
	var dst rdmacm.Remote
	if _, err := binary.Decode(id.PrivateData(), binary.LittleEndian, &dst); err != nil {
		t.Fatal(err)
	}
	src, err := mr.AllocRegister(id.PD(), len(msg), uverbs.LocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := copy(src.Bytes(), msg)
	if err := id.PostWrite(1, src.MR(), 0, n, uverbs.SendSignaled, dst); err != nil {
		t.Fatal(err)
	}
	wc, err := id.GetSendComp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := wc.Err(); err != nil {
		t.Fatal(err)
	}
}
