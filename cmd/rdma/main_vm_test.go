package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/testenv"
)

// rdma runs our tool on the real kernel.
func rdma(t *testing.T, args ...string) string {
	t.Helper()
	var out strings.Builder
	tl := &tool{w: &out, dial: func() (conn, error) { return rdmanl.Dial() }}
	if err := tl.run(args); err != nil {
		t.Fatalf("rdma %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// TestShowVM checks each device's lines, and compares with iproute2's rdma
// where the machine has it.
func TestShowVM(t *testing.T) {
	for _, d := range testenv.Devices(t) {
		t.Run(d.Name, func(t *testing.T) {
			link := rdma(t, "link", "show", d.Name+"/1")
			want := "link " + d.Name + "/1 state "
			if !strings.HasPrefix(link, want) || d.Netdev != "" && !strings.HasSuffix(link, " netdev "+d.Netdev+"\n") {
				t.Errorf("rdma link show %s/1 = %q, want %q... netdev %s", d.Name, link, want, d.Netdev)
			}
			dev := rdma(t, "dev", "show", d.Name)
			if !strings.Contains(dev, ": "+d.Name+": node_type ") {
				t.Errorf("rdma dev show %s = %q", d.Name, dev)
			}

			iproute2, err := exec.LookPath("rdma")
			if err != nil {
				t.Skip("no iproute2 rdma to compare with")
			}
			for _, args := range [][]string{{"link", "show", d.Name + "/1"}, {"dev", "show", d.Name}} {
				b, err := exec.Command(iproute2, args...).Output()
				if err != nil {
					// A reference tool that cannot run here says
					// nothing about ours.
					t.Skipf("iproute2 rdma %s: %v", strings.Join(args, " "), err)
				}
				ours := rdma(t, args...)
				theirs := trimLines(string(b))
				if !strings.Contains(theirs, " protocol ") {
					// iproute2 before 6.5 does not print the protocol.
					ours = regexp.MustCompile(` protocol \S+`).ReplaceAllString(ours, "")
				}
				if diff := cmp.Diff(theirs, ours); diff != "" {
					t.Errorf("rdma %s differs from iproute2 (-iproute2 +ours):\n%s", strings.Join(args, " "), diff)
				}
			}
		})
	}
}

// trimLines drops the blank that iproute2 leaves at the end of each line.
func trimLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")
		if strings.HasSuffix(l, "\n") {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}
