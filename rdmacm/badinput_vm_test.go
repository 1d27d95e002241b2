package rdmacm_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/cmtest"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// TestBadInput passes bad arguments to the ID's entry points on rxe and
// siw: each returns its sentinel, and a send over the connection still
// completes after each.
func TestBadInput(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := connected(t, d, qpCap, 1)
		t.Cleanup(func() { hangUp(t, c, s) })
		_, cregion := memory(t, c.PD())
		_, sregion := memory(t, s.PD())
		fresh, err := cmtest.Channel(t).CreateID(rdmacm.TCP)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fresh.Close() })
		usable := func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.PostRecv(2, sregion, 0, 8); err != nil {
				return err
			}
			if err := c.PostSend(1, cregion, 0, 8, uverbs.SendSignaled); err != nil {
				return err
			}
			swc, err := c.GetSendComp(ctx)
			if err != nil {
				return err
			}
			if err := swc.Err(); err != nil {
				return err
			}
			rwc, err := s.GetRecvComp(ctx)
			if err != nil {
				return err
			}
			return rwc.Err()
		}
		n := cregion.Len()
		remote := sregion.Addr()
		rkey := sregion.RKey()
		var nilMR *mr.MR
		inval := uverbs.ErrInvalid
		cases := []testenv.BadCase{
			testenv.Bad("PostSend: nil region", inval, func() error { return c.PostSend(1, nilMR, 0, 8, 0) }),
			testenv.Bad("PostSend: negative offset", inval, func() error { return c.PostSend(1, cregion, -1, 8, 0) }),
			testenv.Bad("PostSend: offset past the end", inval, func() error { return c.PostSend(1, cregion, n+1, 0, 0) }),
			testenv.Bad("PostSend: length past the end", inval, func() error { return c.PostSend(1, cregion, 8, n, 0) }),
			testenv.Bad("PostSend: offset+length wraps", inval, func() error { return c.PostSend(1, cregion, 1<<62, 1<<62, 0) }),
			testenv.Bad("PostSend: negative length", inval, func() error { return c.PostSend(1, cregion, 0, -1, 0) }),
			testenv.Bad("PostSend: unknown flag", inval, func() error { return c.PostSend(1, cregion, 0, 8, 1<<20) }),
			testenv.Bad("PostRecv: nil region", inval, func() error { return s.PostRecv(1, nilMR, 0, 8) }),
			testenv.Bad("PostRecv: length past the end", inval, func() error { return s.PostRecv(1, sregion, 1, n) }),
			testenv.Bad("PostRead: local range past the end", inval, func() error { return c.PostRead(1, cregion, n-4, 8, 0, rdmacm.Remote{Addr: remote, RKey: rkey}) }),
			testenv.Bad("PostRead: nil region", inval, func() error { return c.PostRead(1, nilMR, 0, 8, 0, rdmacm.Remote{Addr: remote, RKey: rkey}) }),
			testenv.Bad("PostWrite: local range past the end", inval, func() error { return c.PostWrite(1, cregion, n, 1, 0, rdmacm.Remote{Addr: remote, RKey: rkey}) }),
			testenv.Bad("PostWrite: negative length", inval, func() error { return c.PostWrite(1, cregion, 0, -8, 0, rdmacm.Remote{Addr: remote, RKey: rkey}) }),
			testenv.Bad("CreateQP: the ID has one", inval, func() error { return c.CreateQP(nil, uverbs.QPInit{Cap: qpCap}) }),
			testenv.Bad("Migrate: nil channel", inval, func() error { return c.Migrate(nil) }),
			testenv.Bad("Connect: private data over the limit", rdmacm.ErrPrivateData, func() error {
				return c.Connect(&rdmacm.ConnParam{PrivateData: make([]byte, 57)})
			}),
			testenv.Bad("Accept: private data over the limit", rdmacm.ErrPrivateData, func() error {
				return s.Accept(&rdmacm.ConnParam{PrivateData: make([]byte, 197)})
			}),
			testenv.Bad("Reject: private data over the limit", rdmacm.ErrPrivateData, func() error { return s.Reject(make([]byte, 149)) }),
			testenv.Bad("InitQPAttr: unknown state", inval, func() error { _, _, err := c.InitQPAttr(99); return err }),
			testenv.Bad("Bind: a connected ID", inval, func() error { return c.Bind(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0)) }),
			testenv.Bad("Listen: a connected ID", inval, func() error { return c.Listen(1) }),
			testenv.Bad("ResolveRoute: no address resolved", inval, func() error { return fresh.ResolveRoute(time.Second) }),
			testenv.Bad("CreateQP: no device bound", inval, func() error { return fresh.CreateQP(nil, uverbs.QPInit{Cap: qpCap}) }),
			testenv.Bad("PostSend: no QP", inval, func() error { return fresh.PostSend(1, cregion, 0, 8, 0) }),
			testenv.Bad("GetSendComp: no CQ", inval, func() error { _, err := fresh.GetSendComp(context.Background()); return err }),
			testenv.Bad("CreateID: unknown port space", inval, func() error {
				id, err := fresh.Channel().CreateID(0x99)
				if err == nil {
					id.Close()
				}
				return err
			}),
		}
		t.Logf("%d bad inputs tried on %s", testenv.RunBad(t, usable, cases), d.Name)
	})
}

// TestClosedObjects calls every method of an ID and a channel after their
// Close: each returns ErrClosed, and none blocks or panics.
func TestClosedObjects(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		_, addr := listen(t, d, rdmacm.TCP)
		id := dialer(t, addr, rdmacm.TCP, qpCap)
		ch := id.Channel()
		// Close ends a wait for an event that can no longer come.
		waited := make(chan error, 1)
		go func() {
			_, err := id.WaitEvent(context.Background(), rdmacm.EventEstablished)
			waited <- err
		}()
		time.Sleep(50 * time.Millisecond) // let the wait begin; it ends either way
		if err := id.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-waited:
			if !errors.Is(err, rdmacm.ErrClosed) {
				t.Errorf("WaitEvent ended by Close: %v, want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not end a WaitEvent on the ID")
		}
		n := testenv.CallMethods(t, id, rdmacm.ErrClosed, "Close")
		if err := ch.Close(); err != nil {
			t.Fatal(err)
		}
		n += testenv.CallMethods(t, ch, rdmacm.ErrClosed, "Close")
		t.Logf("%d methods called on closed objects of %s", n, d.Name)
	})
}
