package rpma_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/rpma"
)

// onePair listens on d with lopts, dials it with dopts and accepts: the
// Listener, the server's connection and the Client. All of it is closed
// at the end of the test.
func onePair(t *testing.T, d testenv.Dev, lopts *rpma.ListenOptions, dopts *rpma.DialOptions) (*rpma.Listener, *rpma.Conn, *rpma.Client) {
	t.Helper()
	ctx := ctxT(t)
	l, err := rpma.Listen(net.JoinHostPort(d.Addr, "0"), lopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("listener close: %v", err)
		}
	})
	addr, err := l.Addr()
	if err != nil {
		t.Fatal(err)
	}
	type accepted struct {
		c   *rpma.Conn
		err error
	}
	acc := make(chan accepted, 1)
	go func() {
		c, err := l.Accept(ctx)
		acc <- accepted{c, err}
	}()
	cl, err := rpma.Dial(ctx, addr.String(), dopts)
	a := <-acc
	if err != nil || a.err != nil {
		t.Fatalf("dial: %v; accept: %v", err, a.err)
	}
	t.Cleanup(func() {
		if err := cl.Close(); err != nil {
			t.Errorf("client close: %v", err)
		}
	})
	return l, a.c, cl
}

// TestDialListen connects with Dial and Listen: zero and nil options
// work, the client learns the server's region when the server exposes
// one (and only then), the server gets the client's private data, and
// each Close releases everything (the leak check) and may be repeated.
func TestDialListen(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, tt := range []struct {
			name       string
			lopts      *rpma.ListenOptions
			dopts      *rpma.DialOptions
			wantRemote int
		}{
			{"nil options", nil, nil, 0},
			{"zero options", &rpma.ListenOptions{}, &rpma.DialOptions{}, 0},
			{"a region", &rpma.ListenOptions{Region: 4096}, &rpma.DialOptions{PrivateData: []byte("hi")}, 4096},
			{"small queues", &rpma.ListenOptions{Region: 64, Conn: rpma.ConnConfig{SQSize: 2, RQSize: 2}},
				&rpma.DialOptions{Conn: rpma.ConnConfig{SQSize: 2, RQSize: 2}}, 64},
		} {
			t.Run(tt.name, func(t *testing.T) {
				l, srv, cl := onePair(t, d, tt.lopts, tt.dopts)
				if got := cl.Remote().Len(); got != uint64(tt.wantRemote) {
					t.Errorf("the client's Remote has %d bytes, want %d", got, tt.wantRemote)
				}
				if tt.dopts != nil && tt.dopts.PrivateData != nil && !bytes.HasPrefix(srv.PrivateData(), tt.dopts.PrivateData) {
					t.Errorf("the server got private data %q, want %q", srv.PrivateData(), tt.dopts.PrivateData)
				}
				if cl.Peer() == nil || l.Peer() == nil || cl.Conn() == nil {
					t.Fatal("a nil Peer or Conn")
				}
				// Memory of the client's peer, left open: Close frees it.
				if _, err := cl.Peer().AllocMR(4096, rpma.UsageReadDst); err != nil {
					t.Fatal(err)
				}
				if err := cl.Close(); err != nil {
					t.Fatal(err)
				}
				if err := cl.Close(); err != nil {
					t.Errorf("second close: %v", err)
				}
				if err := cl.Conn().ReadAndWait(ctxT(t), rpma.Span{}, rpma.RemoteSpan{}); !errors.Is(err, rpma.ErrClosed) {
					t.Errorf("ReadAndWait on a closed client = %v, want ErrClosed", err)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := l.Accept(ctxT(t)); !errors.Is(err, rpma.ErrClosed) {
					t.Errorf("Accept on a closed listener = %v, want ErrClosed", err)
				}
			})
		}
		t.Run("refused", func(t *testing.T) {
			// A port nobody listens on: ECONNREFUSED on rxe (the CM's
			// reject) and siw (the TCP reset).
			l, err := rpma.Listen(net.JoinHostPort(d.Addr, "0"), nil)
			if err != nil {
				t.Fatal(err)
			}
			addr, err := l.Addr()
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			_, err = rpma.Dial(ctxT(t), addr.String(), nil)
			if !errors.Is(err, rpma.ErrProvider) {
				t.Errorf("dial of a closed port = %v, want ErrProvider", err)
			}
		})
	})
}

// TestOpAndWait writes, flushes and reads the server's region with the
// operation-and-wait methods; each returns once its own completion came.
func TestOpAndWait(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		l, _, cl := onePair(t, d, &rpma.ListenOptions{Region: 4096,
			RegionUsage: rpma.UsageReadSrc | rpma.UsageWriteDst | rpma.UsageFlushTypeVisibility}, nil)
		local, err := cl.Peer().AllocMR(4096, rpma.UsageReadDst|rpma.UsageWriteSrc)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name     string
			off, len int
		}{
			{"a byte", 0, 1},
			{"a cache line", 64, 64},
			{"the end", 4096 - 100, 100},
			{"all", 0, 4096},
		} {
			t.Run(tt.name, func(t *testing.T) {
				want := bytes.Repeat([]byte(tt.name), tt.len/len(tt.name)+1)[:tt.len]
				copy(local.Bytes()[tt.off:], want)
				if err := cl.Conn().WriteAndWait(ctx, cl.Remote().At(tt.off), local.Span(tt.off, tt.len)); err != nil {
					t.Fatal(err)
				}
				if err := cl.Conn().FlushAndWait(ctx, cl.Remote().At(tt.off), tt.len, rpma.FlushVisibility); err != nil {
					t.Fatal(err)
				}
				if got := l.Region().Bytes()[tt.off : tt.off+tt.len]; !bytes.Equal(got, want) {
					t.Fatalf("the server's region holds %q, want %q", got, want)
				}
				clear(local.Bytes())
				if err := cl.Conn().ReadAndWait(ctx, local.Span(tt.off, tt.len), cl.Remote().At(tt.off)); err != nil {
					t.Fatal(err)
				}
				if got := local.Bytes()[tt.off : tt.off+tt.len]; !bytes.Equal(got, want) {
					t.Fatalf("read %q, want %q", got, want)
				}
			})
		}
		// Ranges are checked before anything is posted.
		if err := cl.Conn().ReadAndWait(ctx, local.Span(0, 8), cl.Remote().At(4096-4)); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("a read past the remote region = %v, want ErrInvalid", err)
		}
	})
}

// TestRouterGoroutines has goroutines share one connection: each reads
// its own part of the server's region over and over into its own part of
// a local region, and must find its own data, whichever goroutine polled
// the completion.
func TestRouterGoroutines(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		const goroutines, chunk, rounds = 16, 64, 100
		l, _, cl := onePair(t, d, &rpma.ListenOptions{Region: goroutines * chunk}, &rpma.DialOptions{Conn: rpma.ConnConfig{SQSize: 4}})
		for i := range goroutines { // chunk i holds byte i+1
			copy(l.Region().Bytes()[i*chunk:], bytes.Repeat([]byte{byte(i + 1)}, chunk))
		}
		local, err := cl.Peer().AllocMR(goroutines*chunk, rpma.UsageReadDst)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, goroutines)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := local.Bytes()[g*chunk : (g+1)*chunk]
				for r := range rounds {
					clear(mine)
					if err := cl.Conn().ReadAndWait(ctx, local.Span(g*chunk, chunk), cl.Remote().At(g*chunk)); err != nil {
						errs <- err
						return
					}
					if mine[0] != byte(g+1) || mine[chunk-1] != byte(g+1) {
						errs <- fmt.Errorf("goroutine %d, round %d: read %d..%d, want %d", g, r, mine[0], mine[chunk-1], g+1)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		// No allocation count here: whether a read's wait sleeps on the
		// completion channel depends on timing, and a sleep costs the
		// connection watcher's goroutine and context (rdmacm.ID.WaitCQ).
		// TestRouterAllocs counts the router's own allocations (none)
		// on the host, where nothing sleeps.
	})
}

// TestMessenger sends messages both ways: more than the receive depth,
// so that released buffers must have been posted again; of sizes up to
// the limit; and checks the errors of a message too large, a second
// Release and a Recv whose context ends.
func TestMessenger(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		const size, depth = 100, 3
		_, srv, cl := onePair(t, d, nil, nil)
		sm, err := rpma.NewMessenger(srv, size, depth)
		if err != nil {
			t.Fatal(err)
		}
		cm, err := rpma.NewMessenger(cl.Conn(), size, depth)
		if err != nil {
			t.Fatal(err)
		}
		echoCtx, stopEcho := context.WithCancel(ctx)
		defer stopEcho()
		echo := make(chan error, 1)
		go func() { // the server echoes each message back
			for {
				msg, err := sm.Recv(echoCtx)
				if err != nil {
					echo <- err
					return
				}
				err = sm.Send(echoCtx, msg.Bytes())
				msg.Release()
				if err != nil {
					echo <- err
					return
				}
			}
		}()
		for i := range 5 * depth {
			want := bytes.Repeat([]byte{byte(i)}, i*size/(5*depth-1))
			if err := cm.Send(ctx, want); err != nil {
				t.Fatal(err)
			}
			msg, err := cm.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(msg.Bytes(), want) {
				t.Fatalf("message %d: got %d bytes %x..., want %d", i, len(msg.Bytes()), msg.Bytes()[:min(4, len(msg.Bytes()))], len(want))
			}
			if err := msg.Release(); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				if err := msg.Release(); !errors.Is(err, rpma.ErrInvalid) {
					t.Errorf("second release = %v, want ErrInvalid", err)
				}
			}
		}
		if err := cm.Send(ctx, make([]byte, size+1)); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("a message of size+1 bytes = %v, want ErrInvalid", err)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := cm.Recv(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Recv with nothing sent = %v, want DeadlineExceeded", err)
		}
		if _, err := rpma.NewMessenger(cl.Conn(), size, depth); !errors.Is(err, rpma.ErrInvalid) {
			t.Errorf("a second messenger = %v, want ErrInvalid", err)
		}
		stopEcho()
		if err := <-echo; !errors.Is(err, context.Canceled) {
			t.Fatalf("echo: %v", err)
		}
		// A Recv waiting when the connection closes returns.
		waiting := make(chan error, 1)
		go func() {
			_, err := sm.Recv(ctx)
			waiting <- err
		}()
		time.Sleep(50 * time.Millisecond)
		srv.Close()
		if err := <-waiting; !errors.Is(err, rpma.ErrClosed) && !errors.Is(err, cq.ErrCompletion) {
			t.Errorf("the server's Recv after its connection closed = %v, want ErrClosed or a flushed receive", err)
		}
	})
}

// TestRouterClose closes a connection while goroutines wait on it in
// Recv and Send: every one must return an error (ErrClosed, the flushed
// completion of its work request, or the connection's end), and no
// goroutine may be left behind.
func TestRouterClose(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		ctx := ctxT(t)
		_, srv, cl := onePair(t, d, nil, nil)
		before := runtime.NumGoroutine()
		cm, err := rpma.NewMessenger(cl.Conn(), 64, 4)
		if err != nil {
			t.Fatal(err)
		}
		// The server has no receive posted: on RoCE a send waits for one
		// (RNR retries without end), as Recv waits for a message. An
		// iWARP send completes once TCP has the data, so there only
		// Recv waits.
		waiters, senders := 6, 3
		if d.IWARP() {
			senders = 0
		}
		errs := make(chan error, waiters)
		for i := range waiters {
			go func() {
				if i >= senders {
					_, err := cm.Recv(ctx)
					errs <- err
					return
				}
				errs <- cm.Send(ctx, []byte("nobody receives this"))
			}()
		}
		time.Sleep(100 * time.Millisecond) // let them block
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
		for range waiters {
			select {
			case err := <-errs:
				// The disconnect before the close may flush the
				// posted sends and receives first, or a waiter may see
				// the connection end (the disconnect's event, or on
				// siw its flushed receive) before the close: all three
				// are an end, not a hang.
				if !errors.Is(err, rpma.ErrClosed) && !errors.Is(err, cq.ErrCompletion) && !errors.Is(err, rdmacm.ErrDisconnected) {
					t.Errorf("a waiter returned %v, want ErrClosed, a flushed completion or rdmacm.ErrDisconnected", err)
				}
			case <-ctx.Done():
				t.Fatal("a waiter was left behind")
			}
		}
		srv.Close()
		testenv.GoroutinesBack(t, before, "the close")
	})
}
