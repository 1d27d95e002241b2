package rsocket_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
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
