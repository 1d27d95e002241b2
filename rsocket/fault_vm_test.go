package rsocket_test

import (
	"errors"
	"io"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

// TestPeerKilled kills a C rstream server mid-test: a Read waiting for
// its data and the Write after it fail with an error matching
// syscall.ECONNRESET, not io.EOF, and the Conn still closes cleanly.
func TestPeerKilled(t *testing.T) {
	rstream := testenv.CTool(t, "rstream")
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		port := strconv.Itoa(testenv.FreePort(t))
		// The server waits for 1000 transfers of 1000 bytes after the
		// 16-byte sync; the client sends none.
		cmd := exec.Command(rstream, "-b", d.Addr, "-p", port, "-S", "1000", "-C", "1000", "-T", "b")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer cmd.Process.Kill()
		var c *rsocket.Conn
		for try := 0; ; try++ {
			if d.Driver == "siw" {
				n, _ := strconv.Atoi(port)
				for !netport.Listening(n) && try < 50 {
					time.Sleep(10 * time.Millisecond)
					try++
				}
			}
			var err error
			c, err = rsocket.Dial(ctxT(t), "rdma", net.JoinHostPort(d.Addr, port))
			if err == nil {
				break
			}
			if try >= 50 {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		defer c.Close()
		if _, err := c.Write(make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			errc <- err
		}()
		time.Sleep(50 * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("Read when the peer died: %v, want ECONNRESET", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Read still blocked 20s after the peer died")
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("Write after the peer died: %v, want ECONNRESET", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}
