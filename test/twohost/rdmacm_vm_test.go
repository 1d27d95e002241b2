package twohost_test

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// TestConnect: a connection from b to a with private data both ways, a
// message each way, then each side's disconnect in turn.
func TestConnect(t *testing.T) {
	for _, first := range []string{"client", "server"} {
		t.Run(first+"Disconnects", func(t *testing.T) {
			p := begin(t)
			ctx := ctxT(t, 2*time.Minute)
			var id *rdmacm.ID
			var got *rdmacm.Event
			if p.Server() {
				l := p.listen()
				req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
				if err != nil {
					t.Fatal(err)
				}
				got, id = req, req.ID
				t.Cleanup(func() { id.Close() })
				if err := id.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
					t.Fatal(err)
				}
			} else {
				id = p.dial(ctx)
			}
			buf, r := memory(t, id.PD(), 4096)
			if err := id.PostRecv(1, r, 0, 64); err != nil {
				t.Fatal(err)
			}
			mine := []byte("private data from guest " + p.Name)
			param := connParam
			param.PrivateData = mine
			if p.Server() {
				if err := id.Accept(&param); err != nil {
					t.Fatal(err)
				}
			} else if err := id.Connect(&param); err != nil {
				t.Fatal(err)
			}
			est, err := id.WaitEvent(ctx, rdmacm.EventEstablished)
			if err != nil {
				t.Fatalf("guest %s: %v", p.Name, err)
			}
			if !p.Server() {
				got = est
			}
			want := "private data from guest " + p.PeerName
			if !bytes.HasPrefix(got.Param.PrivateData, []byte(want)) || len(bytes.TrimRight(got.Param.PrivateData[len(want):], "\x00")) != 0 {
				t.Errorf("guest %s got private data %q, want %q (zero padded)", p.Name, got.Param.PrivateData, want)
			}
			msg := "message from guest " + p.Name
			copy(buf[1024:], msg)
			if err := id.PostSend(2, r, 1024, len(msg), uverbs.SendSignaled); err != nil {
				t.Fatal(err)
			}
			if wc, err := id.GetSendComp(ctx); err != nil || wc.Status != cq.Success || wc.ID != 2 {
				t.Fatalf("send completion %+v, %v", wc, err)
			}
			wc, err := id.GetRecvComp(ctx)
			want = "message from guest " + p.PeerName
			if err != nil || wc.Status != cq.Success || wc.ID != 1 || int(wc.ByteLen) != len(want) {
				t.Fatalf("receive completion %+v, %v", wc, err)
			}
			if string(buf[:len(want)]) != want {
				t.Errorf("guest %s received %q, want %q", p.Name, buf[:len(want)], want)
			}
			if p.Role == first {
				if err := id.Disconnect(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := id.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
				t.Fatalf("guest %s: %v", p.Name, err)
			}
			if p.Role != first {
				if err := id.Disconnect(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestReject: a rejects b's request with private data; b sees
// REJECTED with it.
func TestReject(t *testing.T) {
	p := begin(t)
	ctx := ctxT(t, 2*time.Minute)
	if p.Server() {
		l := p.listen()
		req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { req.ID.Close() })
		if err := req.ID.Reject([]byte("go away, " + p.PeerName)); err != nil {
			t.Fatal(err)
		}
		p.recv("rejected")
		return
	}
	id := p.dial(ctx)
	if err := id.Connect(&connParam); err != nil {
		t.Fatal(err)
	}
	ev, err := id.WaitEvent(ctx, rdmacm.EventRejected)
	if err != nil {
		t.Fatalf("guest %s: %v", p.Name, err)
	}
	p.send("rejected", "")
	if want := "go away, " + p.Name; !bytes.HasPrefix(ev.Param.PrivateData, []byte(want)) {
		t.Errorf("reject private data %q, want %q", ev.Param.PrivateData, want)
	}
	t.Logf("guest %s: rejected by guest %s, status %d", p.Name, p.PeerName, ev.Status)
}

// TestNoListener: b connects to a port of a where nobody listens; the
// connection fails with an event, not a hang.
func TestNoListener(t *testing.T) {
	p := begin(t)
	ctx := ctxT(t, 2*time.Minute)
	if p.Server() {
		// A listener that is closed at once: its port is surely free.
		l := p.listen()
		l.Close()
		p.recv("failed")
		return
	}
	id := p.dial(ctx)
	if err := id.Connect(&connParam); err != nil {
		t.Fatal(err)
	}
	ev, err := id.Channel().GetEvent(ctx)
	p.send("failed", "")
	if err != nil {
		t.Fatalf("guest %s: %v", p.Name, err)
	}
	if ev.Type != rdmacm.EventRejected && ev.Type != rdmacm.EventUnreachable {
		t.Fatalf("guest %s: event %v, want REJECTED or UNREACHABLE", p.Name, ev.Type)
	}
	t.Logf("guest %s: connecting to a port of guest %s without a listener: %v, status %d", p.Name, p.PeerName, ev.Type, ev.Status)
}

// TestManyConnections: b opens several connections to one listener of a
// at once; each carries its own message.
func TestManyConnections(t *testing.T) {
	p := begin(t)
	ctx := ctxT(t, 2*time.Minute)
	const n = 4
	if p.Server() {
		l := p.listen()
		for i := range n {
			req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
			if err != nil {
				t.Fatal(err)
			}
			id := req.ID
			t.Cleanup(func() { id.Close() })
			if err := id.CreateQP(nil, uverbs.QPInit{Cap: qpCap}); err != nil {
				t.Fatal(err)
			}
			buf, r := memory(t, id.PD(), 4096)
			if err := id.PostRecv(uint64(i), r, 0, 64); err != nil {
				t.Fatal(err)
			}
			if err := id.Accept(&connParam); err != nil {
				t.Fatal(err)
			}
			if _, err := id.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
				t.Fatal(err)
			}
			wc, err := id.GetRecvComp(ctx)
			if err != nil || wc.Status != cq.Success {
				t.Fatalf("receive completion %+v, %v", wc, err)
			}
			got := string(buf[:wc.ByteLen])
			t.Logf("connection %d: %q", i, got)
			p.send("got", got)
			p.hangUp(ctx, id)
		}
		return
	}
	port := p.recv("listening")
	for i := range n {
		id := p.dialPort(ctx, port)
		_, r := memory(t, id.PD(), 4096)
		if err := id.Connect(&connParam); err != nil {
			t.Fatal(err)
		}
		if _, err := id.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
			t.Fatal(err)
		}
		msg := "connection " + strconv.Itoa(i) + " from guest " + p.Name
		copy(r.Bytes(), msg)
		if err := id.PostSend(1, r, 0, len(msg), uverbs.SendSignaled); err != nil {
			t.Fatal(err)
		}
		if wc, err := id.GetSendComp(ctx); err != nil || wc.Status != cq.Success {
			t.Fatalf("send completion %+v, %v", wc, err)
		}
		if got := p.recv("got"); got != msg {
			t.Errorf("guest %s received %q, want %q", p.PeerName, got, msg)
		}
		p.hangUp(ctx, id)
	}
}
