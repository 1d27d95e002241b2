//go:build linux

package rsocket_test

import (
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

// TestDeadPeer: with the default keepalive and a 1 s user timeout, a Read
// blocked on a connection whose peer vanished without a disconnect (its
// QP moved to error: rxe drops what arrives unacknowledged, siw closes the
// TCP connection) fails within the documented bound, KeepAlive +
// UserTimeout + UserTimeout/4, plus slack for a loaded machine. On rxe it
// is the user timeout (ETIMEDOUT) that ends it: rxe retries the
// keepalive for ever; on siw the closed connection (ECONNRESET or a
// failed completion).
func TestDeadPeer(t *testing.T) {
	const userTimeout = time.Second
	bound := rsocket.DefaultKeepAlive + userTimeout + userTimeout/4 + 5*time.Second
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c, s := pair(t, d, &rsocket.Options{UserTimeout: userTimeout})
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(s, make([]byte, 4)); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			errc <- err
		}()
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		if err := rsocket.BreakQP(s); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			t.Logf("%s: Read failed %v after the peer's QP broke: %v", d.Driver, time.Since(start), err)
			if !errors.Is(err, syscall.ETIMEDOUT) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EIO) {
				t.Errorf("Read: %v; want ETIMEDOUT, ECONNRESET or EIO", err)
			}
		case <-time.After(bound):
			t.Fatalf("Read still blocked %v after the peer's QP broke", bound)
		}
		if _, err := c.Write([]byte("x")); err == nil {
			t.Error("Write on the failed connection succeeded")
		}
	})
}
