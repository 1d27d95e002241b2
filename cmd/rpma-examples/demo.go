package main

// rpma-examples demo: 05-flush-to-persistent's server and client in one
// process, on the rxe address and then on the siw address, every line
// prefixed with the device and the side.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// demoPorts are the ports the demo's servers listen on.
const demoPort = 7250

// linePrefixer writes whole lines to w, each with a prefix, and keeps a
// copy of what it got.
type linePrefixer struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    bytes.Buffer
	all    bytes.Buffer
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	l.all.Write(p)
	l.buf.Write(p)
	for {
		i := bytes.IndexByte(l.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := l.buf.Next(i + 1)
		l.mu.Lock()
		fmt.Fprintf(l.w, "%s%s", l.prefix, line)
		l.mu.Unlock()
	}
}

// flush writes a last line that has no newline.
func (l *linePrefixer) flush() {
	if l.buf.Len() > 0 {
		l.Write([]byte("\n"))
	}
}

type demoDev struct{ name, addr string }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// demoDevices picks the devices: rxe always, siw when an address or a
// device name for it is given.
func demoDevices(args []string) []demoDev {
	devs := []demoDev{{envOr("PURERDMA_RXE", "rxe0"), envOr("PURERDMA_RXE_ADDR", "192.168.77.1")}}
	if len(args) >= 1 {
		devs[0].addr = args[0]
	}
	siw := demoDev{envOr("PURERDMA_SIW", "siw0"), envOr("PURERDMA_SIW_ADDR", "192.168.78.1")}
	if len(args) >= 2 {
		siw.addr = args[1]
		devs = append(devs, siw)
	} else if os.Getenv("PURERDMA_SIW_ADDR") != "" || os.Getenv("PURERDMA_SIW") != "" {
		devs = append(devs, siw)
	}
	return devs
}

// demoResult is what one device's run came to.
type demoResult struct {
	serverCode, clientCode int
	serverOut, clientOut   string
}

func (r demoResult) ok() bool {
	return r.serverCode == 0 && r.clientCode == 0 &&
		strings.Contains(r.clientOut, "Translation: ¡Hola Mundo!\n") &&
		strings.Contains(r.serverOut, "New value: Hello world!\n")
}

// runPair runs ex's server and then its client against it, each side's
// lines prefixed with "[dev side] ".
func runPair(ctx context.Context, ex *example, dev string, serverArgs, clientArgs []string, stdout, stderr io.Writer) demoResult {
	var mu sync.Mutex
	side := func(name string) (*linePrefixer, *linePrefixer) {
		p := fmt.Sprintf("[%s %s] ", dev, name)
		return &linePrefixer{mu: &mu, w: stdout, prefix: p}, &linePrefixer{mu: &mu, w: stderr, prefix: p}
	}
	sOut, sErr := side("server")
	cOut, cErr := side("client")
	listening := make(chan struct{})
	var once sync.Once
	sctx := withListenHook(ctx, func() { once.Do(func() { close(listening) }) })
	var r demoResult
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.serverCode = ex.server(sctx, serverArgs, sOut, sErr)
		once.Do(func() { close(listening) })
	}()
	select {
	case <-listening:
	case <-ctx.Done():
	}
	select {
	case <-done: // the server failed before it listened
		r.clientCode = -1
	default:
		r.clientCode = ex.client(ctx, clientArgs, cOut, cErr)
		<-done
	}
	for _, l := range []*linePrefixer{sOut, sErr, cOut, cErr} {
		l.flush()
	}
	r.serverOut, r.clientOut = sOut.all.String(), cOut.all.String()
	return r
}

func demo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ex := lookup("05-flush-to-persistent")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	failed := 0
	for i, d := range demoDevices(args) {
		a := []string{d.addr, fmt.Sprint(demoPort + i)}
		r := runPair(ctx, ex, d.name, a, a, stdout, stderr)
		status := "OK"
		if !r.ok() {
			status = "FAILED"
			failed++
		}
		fmt.Fprintf(stdout, "[%s] 05-flush-to-persistent on %s: %s (server exit %d, client exit %d)\n", d.name, d.addr, status, r.serverCode, r.clientCode)
	}
	if failed > 0 {
		return 1
	}
	return 0
}
