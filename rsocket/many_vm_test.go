//go:build linux

package rsocket_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

// TestManyConns opens manyConns connections through one Listener, has
// all of them move verified data both ways at the same time (the server
// echoes, each client writes more than the buffers hold), then closes
// them all; TestMain's leak check sees everything freed.
func TestManyConns(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		testenv.CheckLeaks(t)
		const n = 100
		if d.Driver == "siw" {
			raiseMemlock(t)
		}
		// Small rings keep 2n connections in the VM's memory and make
		// every transfer need several credit updates.
		o := &rsocket.Options{SendBuffer: 16384, RecvBuffer: 16384}
		l, err := o.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		servers := make(chan *rsocket.Conn, n)
		defer func() {
			// On failure, accepted conns may wait in the channel.
			l.Close()
			for len(servers) > 0 {
				(<-servers).Close()
			}
		}()
		accErr := make(chan error, 1)
		go func() {
			for range n {
				s, err := l.AcceptRsocket()
				if err != nil {
					accErr <- err
					return
				}
				servers <- s
			}
			accErr <- nil
		}()
		var clients []*rsocket.Conn
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		for i := range n {
			c, err := o.Dial(ctxT(t), "rdma", l.Addr().String())
			if err != nil {
				t.Fatalf("dial %d of %d: %v", i+1, n, err)
			}
			clients = append(clients, c)
		}
		if err := <-accErr; err != nil {
			t.Fatalf("accept: %v", err)
		}
		var srv []*rsocket.Conn
		for range n {
			srv = append(srv, <-servers)
		}
		defer func() {
			for _, s := range srv {
				s.Close()
			}
		}()

		// All connections exist now; every one transfers at once.
		const size = 200_000
		start := time.Now()
		for _, s := range srv {
			go func() {
				io.Copy(s, s)
				s.CloseWrite()
			}()
		}
		errc := make(chan error, n)
		for i, c := range clients {
			go func() {
				want := pattern(size, byte(i))
				c.SetDeadline(time.Now().Add(60 * time.Second))
				werr := make(chan error, 1)
				go func() {
					_, err := c.Write(want)
					if err == nil {
						err = c.CloseWrite()
					}
					werr <- err
				}()
				got, err := io.ReadAll(c)
				if err == nil {
					err = <-werr
				}
				if err == nil && !bytes.Equal(got, want) {
					err = fmt.Errorf("%d bytes back, differ from the %d sent", len(got), size)
				}
				if err != nil {
					err = fmt.Errorf("conn %d: %w", i, err)
				}
				errc <- err
			}()
		}
		var errs []error
		for range n {
			errs = append(errs, <-errc)
		}
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d connections echoed %d bytes each in %v", n, size, time.Since(start))
		for _, c := range clients {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}
		for _, s := range srv {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		}
		clients, srv = nil, nil
	})
}

// raiseMemlock lifts RLIMIT_MEMLOCK for the test. siw pins a memory
// region's pages against RLIMIT_MEMLOCK even for root (siw_umem_get has
// no CAP_IPC_LOCK exemption, unlike ib_umem_get, which rxe uses): with the
// default 8 MiB and 16 KiB rings (three regions, 11 pages a conn), the
// 94th connection's registration failed with ENOMEM, i.e. 186 conns of
// one process. Raising the limit is what siw users do (ulimit -l).
func raiseMemlock(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &old); err != nil {
		t.Fatal(err)
	}
	inf := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &inf); err != nil {
		t.Fatalf("raising RLIMIT_MEMLOCK from %d: %v", old.Cur, err)
	}
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_MEMLOCK, &old) })
}
