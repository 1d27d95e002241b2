package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name, console, want string
	}{{
		name: "passed",
		console: "=== purerdma-vm: run uverbs (amd64, Linux 6.12.117+deb12-amd64)\n" +
			"=== RUN   TestX\n--- PASS: TestX (0.00s)\nPASS\n" +
			"=== purerdma-vm: uverbs exit 0 (amd64, Linux 6.12.117+deb12-amd64, 20ms)\n",
	}, {
		name: "failed subtest with messages and kernel lines between",
		console: "=== RUN   TestKeepAlive/rxe0\n" +
			"--- FAIL: TestKeepAlive (10.31s)\r\n" +
			"    --- FAIL: TestKeepAlive/rxe0 (10.30s)\r\n" +
			"        conn_vm_test.go:380: after keepalives: read: i/o timeout\r\n" +
			"[  205.080609] rdma_rxe: something\n" +
			"        conn_vm_test.go:381: second message\n" +
			"    --- PASS: TestKeepAlive/siw0 (0.61s)\n" +
			"=== RUN   TestNext\n" +
			"    unrelated indented log line\n" +
			"FAIL\n" +
			"=== purerdma-vm: rsocket exit 1 (amd64, Linux 6.12.117+deb12-amd64, 60s)\n" +
			"purerdma-vm: exit status 1\n",
		want: "vm: what failed in the guest:\n" +
			"vm:   --- FAIL: TestKeepAlive (10.31s)\n" +
			"vm:       --- FAIL: TestKeepAlive/rxe0 (10.30s)\n" +
			"vm:           conn_vm_test.go:380: after keepalives: read: i/o timeout\n" +
			"vm:           conn_vm_test.go:381: second message\n" +
			"vm:   FAIL\n" +
			"vm:   === purerdma-vm: rsocket exit 1 (amd64, Linux 6.12.117+deb12-amd64, 60s)\n",
	}, {
		name: "messages streamed before the result, as under -v",
		console: "=== RUN   TestDeadline\n" +
			"=== RUN   TestDeadline/rxe0\n" +
			"    conn_vm_test.go:181: write past its deadline: 0, i/o timeout\n" +
			"=== RUN   TestDeadline/siw0\n" +
			"    conn_vm_test.go:90: logged by a subtest that passes\n" +
			"=== RUN   TestOther\n" +
			"    other_test.go:7: logged by a test that passes\n" +
			"--- PASS: TestOther (0.01s)\n" +
			"--- FAIL: TestDeadline (0.40s)\n" +
			"    --- FAIL: TestDeadline/rxe0 (0.22s)\n" +
			"    --- PASS: TestDeadline/siw0 (0.16s)\n" +
			"FAIL\n",
		want: "vm: what failed in the guest:\n" +
			"vm:   --- FAIL: TestDeadline (0.40s)\n" +
			"vm:       --- FAIL: TestDeadline/rxe0 (0.22s)\n" +
			"vm:       conn_vm_test.go:181: write past its deadline: 0, i/o timeout\n" +
			"vm:   FAIL\n",
	}, {
		name: "panic, timeout, kernel BUG",
		console: "panic: test timed out after 10m0s\n" +
			"\trunning tests:\n" +
			"[  301.5] BUG: kernel NULL pointer dereference, address: 0000000000000008\n" +
			"[  301.6] siw: something else\n" +
			"fatal error: all goroutines are asleep - deadlock!\n",
		want: "vm: what failed in the guest:\n" +
			"vm:   panic: test timed out after 10m0s\n" +
			"vm:   [  301.5] BUG: kernel NULL pointer dereference, address: 0000000000000008\n" +
			"vm:   fatal error: all goroutines are asleep - deadlock!\n",
	}, {
		name: "pair guests",
		console: "[a] --- FAIL: TestLoss (3.00s)\n" +
			"[a]     pair_test.go:10: lost\n" +
			"[b] --- PASS: TestLoss (3.00s)\n" +
			"[b]     not kept\n",
		want: "vm: what failed in the guest:\n" +
			"vm:   [a] --- FAIL: TestLoss (3.00s)\n" +
			"vm:   [a]     pair_test.go:10: lost\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f := newFailures(&out)
			// In pieces that split lines, as a pipe may.
			for c := range slices.Chunk([]byte(tc.console), 7) {
				if _, err := f.Write(c); err != nil {
					t.Fatal(err)
				}
			}
			if out.String() != tc.console {
				t.Errorf("passed through %q, want %q", out.String(), tc.console)
			}
			if got := f.report("guest"); got != tc.want {
				t.Errorf("report:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestFailuresLimit(t *testing.T) {
	var out bytes.Buffer
	f := newFailures(&out)
	for i := range maxFailureLines + 5 {
		fmt.Fprintf(f, "--- FAIL: Test%d (0.00s)\n", i)
	}
	got := f.report("guest")
	if n := strings.Count(got, "--- FAIL"); n != maxFailureLines {
		t.Errorf("kept %d lines, want %d", n, maxFailureLines)
	}
	if !strings.HasSuffix(got, "vm:   (5 lines more)\n") {
		t.Errorf("report ends %q, want the count of lines left out", got[len(got)-40:])
	}
}
