// Package pptest holds the test code the three pingpong ports share: the
// command line checks on the host and the interop runs against the C
// tools in the VM. Only tests import it.
package pptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// RunFunc is a tool's runContext.
type RunFunc = func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// With returns the tool's defaults changed by f, for a parse case's
// wanted options.
func With(tool *pingpong.Tool, f func(o *pingpong.Options)) pingpong.Options {
	o := tool.Defaults
	f(&o)
	return o
}

// CheckParse checks that tool parses args into want.
func CheckParse(t *testing.T, tool *pingpong.Tool, args []string, want pingpong.Options) {
	t.Helper()
	got, err := tool.Parse(args)
	if err != nil {
		t.Errorf("Parse(%q): %v", args, err)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse(%q) (-want +got):\n%s", args, diff)
	}
}

// CheckError runs a bad command line, which must exit 1 with wantStderr
// in its stderr ("" for nothing there) and, when usage is set, the tool's
// usage text on stdout, as the C tools print it for the lines getopt
// rejects; stdout is empty otherwise.
func CheckError(t *testing.T, tool *pingpong.Tool, run RunFunc, args []string, wantStderr string, usage bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 1 {
		t.Errorf("run(%q) = %d, want 1", args, code)
	}
	if !strings.Contains(stderr.String(), wantStderr) || (wantStderr == "") != (stderr.Len() == 0) {
		t.Errorf("run(%q) stderr = %q, want it to say %q", args, stderr.String(), wantStderr)
	}
	wantStdout := ""
	if usage {
		wantStdout = fmt.Sprintf(tool.Usage, tool.Name)
	}
	if stdout.String() != wantStdout {
		t.Errorf("run(%q) stdout = %q, want %q", args, stdout.String(), wantStdout)
	}
}

// GIDIndex is the index of the GID of d's address on port 1, which the
// interop runs give as -g.
func GIDIndex(t *testing.T, d testenv.Dev) int {
	t.Helper()
	uc, err := uverbs.OpenName(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	gidx, err := uc.GIDIndex(1, netip.MustParseAddr(d.Addr))
	if err != nil {
		t.Fatal(err)
	}
	return gidx
}

// Pair runs server with args, waits until it listens on port, then client
// with args and 127.0.0.1; both must exit 0. cancel ends ctx: when the
// client fails, the server would wait for it forever.
func Pair(ctx context.Context, cancel func(), t *testing.T, port int,
	server testenv.Side, serverArgs []string, client testenv.Side, clientArgs []string) (srv, cli testenv.Result) {
	t.Helper()
	srvDone := make(chan testenv.Result, 1)
	go func() { srvDone <- server(ctx, serverArgs) }()
	for !netport.Listening(port) {
		select {
		case srv = <-srvDone:
			t.Fatalf("server ended before listening:\n%v", srv)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cli = client(ctx, append(slices.Clip(clientArgs), "127.0.0.1"))
	if cli.Code != 0 {
		cancel()
	}
	srv = <-srvDone
	if srv.Code != 0 || cli.Code != 0 {
		t.Fatalf("failed:\n%v\n%v", srv, cli)
	}
	t.Logf("server:\n%s", srv.Stdout)
	t.Logf("client:\n%s", cli.Stdout)
	return srv, cli
}

// addrLine matches the address lines of the Go and C tools; the UD
// tools print a colon before the local GID.
var addrLine = regexp.MustCompile(`(?m)^  (local|remote) address: {1,2}LID (0x[0-9a-f]{4}), QPN (0x[0-9a-f]{6}), PSN (0x[0-9a-f]{6})[,:] GID (\S+)$`)

// Addrs returns the "LID QPN PSN GID" parts of the local and remote
// lines, n of each, locals first.
func Addrs(t *testing.T, r testenv.Result, n int) (local, remote []string) {
	t.Helper()
	m := addrLine.FindAllStringSubmatch(r.Stdout, -1)
	if len(m) != 2*n {
		t.Fatalf("want %d local and %d remote address lines:\n%v", n, n, r)
	}
	for i, l := range m {
		want := "local"
		if i >= n {
			want = "remote"
		}
		if l[1] != want {
			t.Fatalf("line %d is %s, want %s:\n%v", i, l[1], want, r)
		}
		if i < n {
			local = append(local, strings.Join(l[2:], " "))
		} else {
			remote = append(remote, strings.Join(l[2:], " "))
		}
	}
	return local, remote
}

// statLines are the two lines every run ends with.
var statLines = regexp.MustCompile(`(?m)^\d+ bytes in \d+\.\d\d seconds = \d+\.\d\d Mbit/sec\n\d+ iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter\n`)

// CheckPair checks what a pair of runs over qps QPs printed: each side's
// remote addresses are the other's local ones, which end in the GID of
// d's address, and both print the statistics of iters messages of size
// bytes and nothing on stderr.
func CheckPair(t *testing.T, d testenv.Dev, srv, cli testenv.Result, qps, iters, size int) {
	t.Helper()
	sl, sr := Addrs(t, srv, qps)
	cl, cr := Addrs(t, cli, qps)
	if !slices.Equal(sl, cr) || !slices.Equal(cl, sr) {
		t.Errorf("address lines disagree: server local %q remote %q, client local %q remote %q", sl, sr, cl, cr)
	}
	wantGID := "::ffff:" + d.Addr
	for _, a := range append(sl, cl...) {
		if !strings.HasSuffix(a, " "+wantGID) {
			t.Errorf("address %q does not end in GID %s", a, wantGID)
		}
	}
	for _, r := range []testenv.Result{srv, cli} {
		for _, want := range []string{
			fmt.Sprintf("%d bytes in ", 2*iters*size),
			fmt.Sprintf("%d iters in ", iters),
		} {
			if !strings.Contains(r.Stdout, "\n"+want) {
				t.Errorf("no line %q...:\n%v", want, r)
			}
		}
		if r.Stderr != "" {
			t.Errorf("unexpected output on stderr:\n%v", r)
		}
		if !statLines.MatchString(r.Stdout) {
			t.Errorf("statistics lines malformed:\n%v", r)
		}
	}
}

// CheckNoServer runs each side as a client of a port nobody listens on,
// with extra arguments besides -d and -p: it must fail as the C tool
// does, after printing its local address.
func CheckNoServer(t *testing.T, d testenv.Dev, sides []testenv.Side, extra ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	port := testenv.FreePort(t)
	args := append([]string{"-d", d.Name}, extra...)
	args = append(args, "-p", strconv.Itoa(port), "127.0.0.1")
	want := fmt.Sprintf("Couldn't connect to 127.0.0.1:%d", port)
	for _, s := range sides {
		r := s(ctx, args)
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) || !strings.HasPrefix(r.Stdout, "  local address:  LID 0x0000, QPN 0x") {
			t.Errorf("want exit 1, stderr %q...:\n%v", want, r)
		}
	}
}
