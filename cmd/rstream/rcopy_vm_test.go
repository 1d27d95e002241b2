package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

// rcopy's messages (rdmacm-utils' rcopy.c): a 16-byte header {version
// u8, command u8, len u16, data u32, id u64} in host byte order (rcopy.c:
// "TODO: handle byte swapping"), answered by a header with command |
// 0x80 and the status in data.
const (
	rcopyOpen  = 1
	rcopyClose = 2
	rcopyWrite = 3
	rcopyResp  = 0x80
)

func rcopyHdr(cmd byte, n int, data uint32) []byte {
	b := make([]byte, 16)
	b[1] = cmd
	binary.LittleEndian.PutUint16(b[2:], uint16(n))
	binary.LittleEndian.PutUint32(b[4:], data)
	return b
}

// rcopyCall sends msg and reads the response to cmd.
func rcopyCall(c net.Conn, cmd byte, msg []byte) error {
	if _, err := c.Write(msg); err != nil {
		return err
	}
	r := make([]byte, 16)
	if _, err := io.ReadFull(c, r); err != nil {
		return err
	}
	if r[1] != cmd|rcopyResp || binary.LittleEndian.Uint32(r[4:]) != 0 {
		return fmt.Errorf("rcopy response % x to command %d", r, cmd)
	}
	return nil
}

// goRcopyClient copies data to path on the rcopy server at addr, as
// rcopy's client does: open, write (size, then the bytes), close.
func goRcopyClient(ctx context.Context, addr, path string, data []byte) error {
	c, err := rsocket.Dial(ctx, "rdma", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	plen := (len(path) + 8) &^ 7 // as rcopy.c pads the name
	msg := append(rcopyHdr(rcopyOpen, 16+plen, 0o644), make([]byte, plen)...)
	copy(msg[16:], path)
	if err := rcopyCall(c, rcopyOpen, msg); err != nil {
		return fmt.Errorf("open: %w", err)
	}
	w := binary.LittleEndian.AppendUint64(rcopyHdr(rcopyWrite, 24, 0), uint64(len(data)))
	if _, err := c.Write(w); err != nil {
		return err
	}
	if err := rcopyCall(c, rcopyWrite, data); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := rcopyCall(c, rcopyClose, rcopyHdr(rcopyClose, 16, 0)); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// goRcopyServer serves one rcopy client on l and returns the path and
// data it sent.
func goRcopyServer(l net.Listener) (path string, data []byte, err error) {
	c, err := l.Accept()
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	resp := func(h []byte) error {
		_, err := c.Write(rcopyHdr(h[1]|rcopyResp, 16, 0))
		return err
	}
	for {
		h := make([]byte, 16)
		if _, err := io.ReadFull(c, h); err == io.EOF {
			return path, data, nil // the client's rshutdown
		} else if err != nil {
			return "", nil, err
		}
		n := int(binary.LittleEndian.Uint16(h[2:]))
		switch h[1] {
		case rcopyOpen:
			p := make([]byte, n-16)
			if _, err := io.ReadFull(c, p); err != nil {
				return "", nil, err
			}
			path = string(bytes.TrimRight(p, "\x00"))
		case rcopyWrite:
			sz := make([]byte, 8)
			if _, err := io.ReadFull(c, sz); err != nil {
				return "", nil, err
			}
			data = make([]byte, binary.LittleEndian.Uint64(sz))
			if _, err := io.ReadFull(c, data); err != nil {
				return "", nil, err
			}
		case rcopyClose:
		default:
			return "", nil, fmt.Errorf("rcopy command % x", h)
		}
		if err := resp(h); err != nil {
			return "", nil, err
		}
	}
}

// TestRcopy copies a file with rdmacm-utils' rcopy C to C, and between
// rcopy and a Go peer on this package (the few lines above speak rcopy's
// messages), each way, on rxe and siw.
func TestRcopy(t *testing.T) {
	rcopy := testenv.CTool(t, "rcopy")
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		want := pattern(3<<20+5, 7)
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		if err := os.WriteFile(src, want, 0o644); err != nil {
			t.Fatal(err)
		}
		// startC runs rcopy's server (it serves until killed) and waits
		// until it listens.
		startC := func(t *testing.T) string {
			port := testenv.FreePort(t)
			ctx, cancel := context.WithCancel(context.Background())
			cmd := exec.CommandContext(ctx, rcopy, "-p", strconv.Itoa(port))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				cancel()
				cmd.Wait()
				t.Logf("C rcopy server: %s", out.String())
			})
			waitListening(t, d, port)
			return strconv.Itoa(port)
		}
		runC := func(t *testing.T, args ...string) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, rcopy, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("C rcopy %v: %v\n%s", args, err, out)
			}
			t.Logf("C rcopy client: %s", out)
		}
		check := func(t *testing.T, path string) {
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: %d bytes, differ from the %d sent", path, len(got), len(want))
			}
		}
		t.Run("CServer-CClient", func(t *testing.T) {
			port := startC(t)
			dst := filepath.Join(dir, "cc")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, rcopy, src, d.Addr+":"+dst, "-p", port).CombinedOutput()
			if err != nil && d.Driver == "siw" && bytes.Contains(out, []byte("rconnect failed\n: Invalid argument")) {
				// rsocket.c's own flaw on siw (docs/rsocket.md, "siw,
				// active side"): the passive side's first send can
				// follow the MPA reply too soon and fail the connect.
				// The C reference pair is recorded, not failed, as
				// TestInterop does for rstream.
				t.Logf("C rcopy pair failed by itself on siw: %v\n%s", err, out)
				return
			}
			if err != nil {
				t.Fatalf("C rcopy client: %v\n%s", err, out)
			}
			check(t, dst)
		})
		t.Run("CServer-GoClient", func(t *testing.T) {
			port := startC(t)
			dst := filepath.Join(dir, "cgo")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := goRcopyClient(ctx, net.JoinHostPort(d.Addr, port), dst, want); err != nil {
				t.Fatal(err)
			}
			check(t, dst)
		})
		t.Run("GoServer-CClient", func(t *testing.T) {
			l, err := rsocket.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			type res struct {
				path string
				data []byte
				err  error
			}
			done := make(chan res, 1)
			go func() {
				p, b, err := goRcopyServer(l)
				done <- res{p, b, err}
			}()
			_, port, _ := net.SplitHostPort(l.Addr().String())
			runC(t, src, d.Addr+":/go-dst", "-p", port)
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.path != "/go-dst" || !bytes.Equal(r.data, want) {
				t.Fatalf("Go server got %q, %d bytes; want /go-dst, the %d bytes sent", r.path, len(r.data), len(want))
			}
		})
	})
}

// waitListening waits until a C server listens on port: on siw its
// rdma_cm listens on TCP; on rxe there is nothing to see, so it waits a
// moment for the server to reach rlisten.
func waitListening(t *testing.T, d testenv.Dev, port int) {
	deadline := time.Now().Add(10 * time.Second)
	if d.Driver != "siw" {
		time.Sleep(500 * time.Millisecond)
		return
	}
	for !netport.Listening(port) {
		if time.Now().After(deadline) {
			t.Fatalf("C server not listening on %d", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pattern is n bytes that differ at every offset of a long stream.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i>>8) ^ seed
	}
	return b
}
