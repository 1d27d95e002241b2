package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestMain fails the binary if a run leaves IDs, QPs, CQs, MRs or fds
// behind.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestSizeStr checks the result columns against common.c's formatting.
func TestSizeStr(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {64, "64"}, {1000, "1000"}, {1024, "1k"}, {1536, "1.5k"}, {12288, "12k"}, {1 << 20, "1m"}, {2000000, "1.9m"}, {3 << 30, "3g"}} {
		if got := sizeStr(c.n); got != c.want {
			t.Errorf("sizeStr(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{999, "999"}, {1000, "1k"}, {100000, "100k"}, {2500000, "2m"}, {7e9, "7b"}} {
		if got := cntStr(c.n); got != c.want {
			t.Errorf("cntStr(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestParse checks getopt's two spellings and the -T options.
func TestParse(t *testing.T) {
	var c config
	if err := parse([]string{"-s", "10.0.0.1", "-p7000", "-S", "4096", "-C", "10", "-T", "v", "-Tb", "-I", "3", "-B", "65536"}, &c); err != nil {
		t.Fatal(err)
	}
	if c.dst != "10.0.0.1" || c.port != "7000" || c.transferSize != 4096 || c.transferCount != 10 || !c.verify || c.iterations != 3 || c.bufferSize != 65536 || !c.custom {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range [][]string{{"-x", "1"}, {"-S"}, {"-T", "f"}, {"extra"}} {
		if err := parse(bad, &config{}); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}

// TestSocketsLoopback runs the Go rstream against itself over TCP (-T s)
// on the loopback interface, with verification: the same test logic that
// the RDMA runs use, on a host.
func TestSocketsLoopback(t *testing.T) {
	port := strconv.Itoa(testenv.FreePort(t))
	args := []string{"-p", port, "-S", "10000", "-C", "20", "-I", "3", "-T", "s", "-T", "v"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var sout, serr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- runContext(ctx, append([]string{"-b", "127.0.0.1"}, args...), &sout, &serr) }()
	var cout, cerr bytes.Buffer
	for try := 0; ; try++ {
		cout.Reset()
		cerr.Reset()
		if runContext(ctx, append([]string{"-s", "127.0.0.1"}, args...), &cout, &cerr) == 0 {
			break
		}
		if try == 50 {
			t.Fatalf("client: %s%s", cout.String(), cerr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := <-done; code != 0 {
		t.Fatalf("server exited %d: %s%s", code, sout.String(), serr.String())
	}
	for _, out := range []string{sout.String(), cout.String()} {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[1], "custom    9.7k    20      3       1.1m    ") {
			t.Errorf("output:\n%s", out)
		}
	}
}
