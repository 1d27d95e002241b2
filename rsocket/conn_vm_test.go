package rsocket_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pair returns a connected client and server on d, closed at the end of
// the test.
func pair(t *testing.T, d testenv.Dev, o *rsocket.Options) (client, server *rsocket.Conn) {
	t.Helper()
	if o == nil {
		o = &rsocket.Options{}
	}
	l, err := o.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type res struct {
		c   *rsocket.Conn
		err error
	}
	acc := make(chan res, 1)
	go func() {
		c, err := l.AcceptRsocket()
		acc <- res{c, err}
	}()
	client, err = o.Dial(ctxT(t), "rdma", l.Addr().String())
	if err != nil {
		l.Close() // ends the Accept
		if r := <-acc; r.c != nil {
			r.c.Close()
		}
		t.Fatal(err)
	}
	r := <-acc
	if r.err != nil {
		client.Close()
		t.Fatal(r.err)
	}
	server = r.c
	t.Cleanup(func() {
		client.Close()
		server.Close()
	})
	return client, server
}

// closingPair is pair's connections as a, the side that closes first
// (first: "client" or "server"), and b, its peer.
func closingPair(t *testing.T, d testenv.Dev, first string) (a, b *rsocket.Conn) {
	t.Helper()
	c, s := pair(t, d, nil)
	if first == "server" {
		return s, c
	}
	return c, s
}

// pattern is n bytes that differ at every offset of a long stream.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i>>8) ^ seed
	}
	return b
}

// TestStream moves data of several sizes each way and checks every byte,
// then closes and sees io.EOF on the other side.
func TestStream(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := pair(t, d, nil)
		for _, size := range []int{1, 64, 65, 4096, 100_000, 1 << 20, 3<<20 + 17} {
			want := pattern(size, byte(size))
			for _, dir := range []struct {
				name string
				w, r *rsocket.Conn
			}{{"client→server", c, s}, {"server→client", s, c}} {
				errc := make(chan error, 1)
				go func() {
					_, err := dir.w.Write(want)
					errc <- err
				}()
				got := make([]byte, size)
				if _, err := io.ReadFull(dir.r, got); err != nil {
					t.Fatalf("%s %d bytes: read: %v", dir.name, size, err)
				}
				if err := <-errc; err != nil {
					t.Fatalf("%s %d bytes: write: %v", dir.name, size, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s %d bytes: data differ", dir.name, size)
				}
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Fatalf("read after the peer's close: %d, %v; want 0, io.EOF", n, err)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read on a closed conn: %v, want net.ErrClosed", err)
		}
	})
}

// TestDeadline: a Read with nothing to read and a Write the peer does not
// drain end at their deadlines with os.ErrDeadlineExceeded, a deadline
// moved into the past wakes a blocked Read, and the conn works after.
func TestDeadline(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := pair(t, d, &rsocket.Options{SendBuffer: 8192, RecvBuffer: 8192})
		buf := make([]byte, 100)

		start := time.Now()
		c.SetReadDeadline(start.Add(50 * time.Millisecond))
		n, err := c.Read(buf)
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read past its deadline: %d, %v", n, err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%v is not a net.Error with Timeout", err)
		}
		// Not before the deadline; the upper bound only guards against a
		// hang (a loaded TCG guest can be seconds late).
		if el := time.Since(start); el < 50*time.Millisecond || el > 10*time.Second {
			t.Errorf("read returned after %v, deadline 50ms", el)
		}

		// A deadline set into the past while Read waits ends the wait, as
		// net/http does to abort a background read.
		c.SetReadDeadline(time.Time{})
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(buf)
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond)
		c.SetReadDeadline(time.Unix(1, 0))
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read after the deadline moved into the past: %v", err)
		}

		// The server does not read: the client's Write fills the server's
		// receive buffer, then blocks for credits. Once the server holds
		// the buffer's 8192 bytes, a deadline moved into the past ends
		// the Write, which reports what it wrote. (The server's count,
		// not a time, says the Write is blocked: a 100 ms deadline here
		// made the outcome depend on how soon the guest ran the writer.)
		type result struct {
			n   int
			err error
		}
		wres := make(chan result, 1)
		go func() {
			n, err := c.Write(make([]byte, 1<<20))
			wres <- result{n, err}
		}()
		for guard := time.Now().Add(10 * time.Second); rsocket.Queued(s) < 8192; time.Sleep(time.Millisecond) {
			if time.Now().After(guard) {
				t.Fatalf("the server holds %d bytes after 10s, want its buffer's 8192", rsocket.Queued(s))
			}
		}
		c.SetWriteDeadline(time.Unix(1, 0))
		var r result
		select {
		case r = <-wres:
		case <-time.After(10 * time.Second):
			t.Fatal("a blocked Write went on 10s after its deadline moved into the past")
		}
		if n = r.n; !errors.Is(r.err, os.ErrDeadlineExceeded) || n >= 1<<20 || n < 8192 {
			t.Fatalf("write past its deadline: %d, %v; want some bytes and a timeout", n, r.err)
		}
		// A deadline that passes while Write waits ends it too, with
		// nothing written: the server's buffer is still full.
		start = time.Now()
		c.SetWriteDeadline(start.Add(50 * time.Millisecond))
		if m, err := c.Write(buf); m != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write to a full peer past its deadline: %d, %v; want 0 and a timeout", m, err)
		}
		if el := time.Since(start); el < 50*time.Millisecond || el > 10*time.Second {
			t.Errorf("write returned after %v, deadline 50ms", el)
		}

		// Everything written arrives, and the conns still work.
		c.SetDeadline(time.Time{})
		got := make([]byte, n)
		if _, err := io.ReadFull(s, got); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write([]byte("ok")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:2]); err != nil || string(buf[:2]) != "ok" {
			t.Fatalf("read %q, %v", buf[:2], err)
		}
	})
}

// TestCloseWrite half-closes each direction in turn: the reader sees the
// data then io.EOF, the other direction goes on, and a Write after
// CloseWrite fails.
func TestCloseWrite(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, first := range []string{"client", "server"} {
			t.Run(first+"First", func(t *testing.T) {
				a, b := closingPair(t, d, first)
				if _, err := a.Write([]byte("last words")); err != nil {
					t.Fatal(err)
				}
				if err := a.CloseWrite(); err != nil {
					t.Fatal(err)
				}
				if _, err := a.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
					t.Errorf("write after CloseWrite: %v, want EPIPE", err)
				}
				got, err := io.ReadAll(b)
				if err != nil || string(got) != "last words" {
					t.Fatalf("ReadAll after the peer's CloseWrite: %q, %v", got, err)
				}
				// The other direction still carries data.
				want := pattern(300_000, 9)
				go func() {
					b.Write(want)
					b.CloseWrite()
				}()
				got, err = io.ReadAll(a)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("the open direction: %d bytes, %v", len(got), err)
				}
			})
		}
	})
}

// TestCloseTellsPeer closes where Close cannot send its
// RS_CTRL_DISCONNECT at once: every control slot in flight, or a passive
// iWARP side still holding its sends (it has not heard from the peer).
// Close waits for the slot or the hold's end and tells the peer, who
// reads the data and io.EOF, not a reset. A C peer told nothing hangs in
// rclose.
func TestCloseTellsPeer(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, tc := range []struct {
			name  string
			close func(*rsocket.Conn) error
		}{
			{"ctrlBusy", rsocket.CloseCtrlBusy},
			{"held", rsocket.CloseHeld},
		} {
			for _, first := range []string{"client", "server"} {
				t.Run(tc.name+"/"+first+"First", func(t *testing.T) {
					a, b := closingPair(t, d, first)
					// The passive iWARP side sends nothing before it has
					// heard from the peer: let a hear from b.
					if _, err := b.Write([]byte("hi")); err != nil {
						t.Fatal(err)
					}
					if _, err := io.ReadFull(a, make([]byte, 2)); err != nil {
						t.Fatal(err)
					}
					if _, err := a.Write([]byte("last words")); err != nil {
						t.Fatal(err)
					}
					if err := tc.close(a); err != nil {
						t.Fatal(err)
					}
					got, err := io.ReadAll(b)
					if err != nil || string(got) != "last words" {
						t.Fatalf("ReadAll after the peer's Close: %q, %v", got, err)
					}
				})
			}
		}
	})
}

// TestFullDuplex has both sides write and read at once, more than their
// buffers hold: credits must flow while each side's Write waits.
func TestFullDuplex(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := pair(t, d, &rsocket.Options{SendBuffer: 16384, RecvBuffer: 16384, SendQueue: 16, RecvQueue: 16})
		const size = 4 << 20
		errc := make(chan error, 4)
		for i, conn := range []*rsocket.Conn{c, s} {
			want := pattern(size, byte(i))
			go func() {
				for off := 0; off < size; off += 10_000 {
					if _, err := conn.Write(want[off:min(off+10_000, size)]); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			go func() {
				got := make([]byte, size)
				_, err := io.ReadFull([]*rsocket.Conn{s, c}[i], got)
				if err == nil && !bytes.Equal(got, want) {
					err = errors.New("data differ")
				}
				errc <- err
			}()
		}
		for range 4 {
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestClosedConn: Read, Write and CloseWrite on a closed Conn, and a Read
// blocked when Close runs, return net.ErrClosed; a second Close too.
func TestClosedConn(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, _ := pair(t, d, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 10))
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; !errors.Is(err, net.ErrClosed) {
			t.Errorf("blocked Read at Close: %v", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write: %v", err)
		}
		if err := c.CloseWrite(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("CloseWrite: %v", err)
		}
		if err := c.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestListenerClose: a blocked Accept returns net.ErrClosed when the
// listener closes.
func TestListenerClose(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		l, err := rsocket.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := l.Accept()
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept at Close: %v", err)
		}
	})
}

// TestNoAlloc: a write and the peer's read of it allocate nothing, on
// either side.
func TestNoAlloc(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := pair(t, d, nil)
		wbuf, rbuf := make([]byte, 4096), make([]byte, 4096)
		roundTrip := func() {
			if _, err := c.Write(wbuf); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(s, rbuf); err != nil {
				t.Fatal(err)
			}
		}
		for range 100 {
			roundTrip() // warm up: the poller goroutines' stacks, timers
		}
		if a := testing.AllocsPerRun(1000, roundTrip); a > 0 {
			t.Errorf("%v allocations per write and read", a)
		}
	})
}

// TestCloseWhileBusy closes a Conn while a Write and a Read run on it in
// loops: they end with net.ErrClosed (or the peer's end), nothing crashes
// on the freed buffers, and nothing leaks.
func TestCloseWhileBusy(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for _, delay := range []time.Duration{0, time.Millisecond, 20 * time.Millisecond} {
			c, s := pair(t, d, &rsocket.Options{SendBuffer: 8192, RecvBuffer: 8192})
			go io.Copy(s, s) // the peer echoes
			errc := make(chan error, 2)
			go func() {
				buf := make([]byte, 5000)
				for {
					if _, err := c.Write(buf); err != nil {
						errc <- err
						return
					}
				}
			}()
			go func() {
				buf := make([]byte, 3000)
				for {
					if _, err := c.Read(buf); err != nil {
						errc <- err
						return
					}
				}
			}()
			time.Sleep(delay)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := <-errc; !errors.Is(err, net.ErrClosed) {
					t.Errorf("after Close (%v in): %v, want net.ErrClosed", delay, err)
				}
			}
		}
	})
}

// TestKeepAlive: keepalives every millisecond on an idle connection (far
// more than the four control slots) leave the credit flow working: a
// transfer that needs many credit updates then goes through.
func TestKeepAlive(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		o := &rsocket.Options{SendBuffer: 8192, RecvBuffer: 8192, KeepAlive: time.Millisecond}
		c, s := pair(t, d, o)
		time.Sleep(300 * time.Millisecond)
		want := pattern(1<<20, 3)
		go c.Write(want)
		got := make([]byte, len(want))
		s.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(s, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("after keepalives: %v", err)
		}
	})
}

// TestConnectRepeat connects and closes 40 times in a row, each time
// moving a few bytes both ways. On Linux 6.12's siw the passive side's
// first message, sent right after its ESTABLISHED, used to reach the
// active side before it had finished the MPA exchange, and about one
// connect in ten failed with EINVAL.
func TestConnectRepeat(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		for i := range 40 {
			l, err := rsocket.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
			if err != nil {
				t.Fatal(err)
			}
			acc := make(chan *rsocket.Conn, 1)
			go func() {
				s, err := l.AcceptRsocket()
				if err != nil {
					t.Errorf("accept %d: %v", i, err)
				}
				acc <- s
			}()
			c, err := rsocket.Dial(ctxT(t), "rdma", l.Addr().String())
			s := <-acc
			l.Close()
			if err != nil {
				if s != nil {
					s.Close()
				}
				t.Fatalf("dial %d: %v", i, err)
			}
			if s == nil {
				c.Close()
				t.FailNow()
			}
			// A stalled connection fails the test rather than hang it.
			c.SetDeadline(time.Now().Add(5 * time.Second))
			s.SetDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 3)
			if _, err := s.Write([]byte("abc")); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "abc" {
				t.Fatalf("%q, %v", buf, err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestClosedObjects: every method of a closed Conn and a closed Listener
// returns net.ErrClosed (or nothing) and does not panic.
func TestClosedObjects(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := pair(t, d, nil)
		c.Close()
		s.Close()
		testenvCall(t, c)
		testenvCall(t, s)
		l, err := rsocket.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		testenvCall(t, l)
	})
}
