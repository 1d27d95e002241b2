// Command rpma-cexamples builds librpma's own C examples outside the
// repository, for a hand run against the Go ports in cmd/rpma-examples
// (TestCExamples, with hack/vm -extra). librpma's code is never copied
// into this repository: the examples are taken from a git clone of
// github.com/pmem/rpma at a tag, unpacked into a temporary directory and
// compiled there with the host's gcc against the host's librpma
// (Debian's librpma-dev 1.2.0), libibverbs and libc.
//
//	go run ./hack/rpma-cexamples -src <rpma git dir> [-ref 1.2.0] -out <dir>
//
// Each example becomes <dir>/<example>-server and <dir>/<example>-client.
// The build is the DRAM one: the examples' CMake adds USE_LIBPMEM or
// USE_LIBPMEM2 only when it finds libpmem or libpmem2, and without them
// (common-pmem.h leaves USE_PMEM undefined) they leave out
// the PMem mapping sources and use malloc'ed memory. The GPSPM examples
// (09, 09scch) need protobuf-c and are left out; so is the log example.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// sources are each example's server and client sources besides its own
// server.c or client.c, as its CMakeLists.txt lists them (tag 1.2.0).
var sources = []struct {
	example        string
	server, client []string
}{
	{"01-connection", nil, nil},
	{"02-read-to-volatile", []string{conn}, []string{conn}},
	{"03-read-to-persistent", pmem, pmemUtils},
	{"04-write-to-persistent", pmem, pmemUtils},
	{"05-flush-to-persistent", pmem, pmemUtils},
	{"06-multiple-connections", []string{conn, epoll}, []string{conn}},
	{"06scch-multiple-connections", []string{conn, epoll}, []string{conn}},
	{"07-atomic-write", pmem, pmem},
	{"08-messages-ping-pong", []string{conn, pingPong}, []string{conn, pingPong, utils}},
	{"08srq-simple-messages-ping-pong-with-srq", []string{conn, pingPong}, []string{conn, pingPong, utils}},
	{"10-send-with-imm", []string{conn}, []string{conn}},
	{"11-write-with-imm", []string{conn}, []string{conn}},
	{"12-receive-completion-queue", []string{conn, "12-receive-completion-queue/receive-completion-queue-common.c"},
		[]string{conn, "12-receive-completion-queue/receive-completion-queue-common.c", utils}},
	{"12scch-receive-completion-queue", []string{conn}, []string{conn, utils}},
	{"13-messages-ping-pong-with-srq", []string{conn, epoll}, []string{conn, pingPong, utils}},
}

const (
	conn     = "common/common-conn.c"
	epoll    = "common/common-epoll.c"
	pingPong = "common/common-messages-ping-pong.c"
	utils    = "common/common-utils.c"
)

var (
	pmem      = []string{conn, "common/common-hello.c"}
	pmemUtils = []string{conn, "common/common-hello.c", utils}
)

func main() {
	src := flag.String("src", "", "a git clone (bare or not) of github.com/pmem/rpma")
	ref := flag.String("ref", "1.2.0", "the tag or commit whose examples to build (1.2.0: Debian 12's librpma)")
	out := flag.String("out", "", "where the binaries go")
	flag.Parse()
	if *src == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := build(*src, *ref, *out); err != nil {
		fmt.Fprintln(os.Stderr, "rpma-cexamples:", err)
		os.Exit(1)
	}
}

func build(src, ref, out string) error {
	tmp, err := os.MkdirTemp("", "rpma-cexamples-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// git archive | tar -x, so that a bare clone serves as well.
	archive := exec.Command("git", "-C", src, "archive", ref, "examples")
	untar := exec.Command("tar", "-x", "-C", tmp)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	archive.Stderr, untar.Stderr = os.Stderr, os.Stderr
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %w", ref, err)
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	dir := filepath.Join(tmp, "examples")
	for _, ex := range sources {
		for _, side := range []struct {
			name  string
			extra []string
		}{{"server", ex.server}, {"client", ex.client}} {
			bin, err := filepath.Abs(filepath.Join(out, ex.example+"-"+side.name))
			if err != nil {
				return err
			}
			args := []string{"-std=gnu99", "-O2", "-Icommon", "-o", bin, filepath.Join(ex.example, side.name+".c")}
			args = append(append(args, side.extra...), "-lrpma", "-libverbs")
			cmd := exec.Command("gcc", args...)
			cmd.Dir = dir
			if msg, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("gcc %s: %w\n%s", strings.Join(args, " "), err, msg)
			}
		}
		fmt.Println(ex.example)
	}
	return nil
}
