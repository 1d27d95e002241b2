package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// rdma runs our tool on the real kernel.
func rdma(t *testing.T, args ...string) string {
	t.Helper()
	var out strings.Builder
	tl := &tool{w: &out, dial: func() (conn, error) { return rdmanl.Dial() }, counters: portCounters}
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

// fields parses lines of "HEAD NAME VALUE NAME VALUE..." (HEAD being
// "N: DEV:" or "link DEV/PORT") into values by head and name.
func fields(t *testing.T, out string, headWords int) map[string]map[string]string {
	t.Helper()
	m := map[string]map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		w := strings.Fields(l)
		if len(w) < headWords || (len(w)-headWords)%2 != 0 {
			t.Fatalf("line %q is not %d words then name-value pairs", l, headWords)
		}
		head := strings.Join(w[:headWords], " ")
		m[head] = map[string]string{}
		for i := headWords; i < len(w); i += 2 {
			m[head][w[i]] = w[i+1]
		}
	}
	return m
}

// TestResourceShowVM compares `rdma resource show` with iproute2's, line
// for line, then checks that a PD of ours shows in the pd count.
func TestResourceShowVM(t *testing.T) {
	testenv.CheckLeaks(t)
	iproute2 := testenv.CTool(t, "rdma")
	for _, d := range testenv.Devices(t) {
		t.Run(d.Name, func(t *testing.T) {
			b, err := exec.Command(iproute2, "resource", "show", d.Name).Output()
			if err != nil {
				t.Fatalf("iproute2 rdma resource show %s: %v", d.Name, err)
			}
			dev, err := uverbs.DeviceByName(d.Name)
			if err != nil {
				t.Fatal(err)
			}
			ours := rdma(t, "resource", "show", d.Name)
			if !strings.HasPrefix(ours, fmt.Sprint(dev.Index)+": "+d.Name+": pd ") {
				t.Errorf("ours = %q", ours)
			}
			if diff := cmp.Diff(trimLines(string(b)), ours); diff != "" {
				t.Errorf("rdma resource show %s differs from iproute2 (-iproute2 +ours):\n%s", d.Name, diff)
			}
			before := fields(t, ours, 2)
			ctx, err := uverbs.OpenName(d.Name)
			if err != nil {
				t.Fatal(err)
			}
			defer ctx.Close()
			pd, err := ctx.AllocPD()
			if err != nil {
				t.Fatal(err)
			}
			defer pd.Close()
			after := fields(t, rdma(t, "res", "show", d.Name), 2)
			head := fmt.Sprintf("%d: %s:", dev.Index, d.Name)
			pb, _ := strconv.Atoi(before[head]["pd"])
			pa, _ := strconv.Atoi(after[head]["pd"])
			if pa != pb+1 {
				t.Errorf("pd count %d after AllocPD, %d before; want one more", pa, pb)
			}
		})
	}
}

// TestStatisticShowVM compares `rdma statistic show link DEV/1` with
// iproute2's for the counters both print (iproute2 prints them in the
// driver's order, we by name).
func TestStatisticShowVM(t *testing.T) {
	testenv.CheckLeaks(t)
	iproute2 := testenv.CTool(t, "rdma")
	for _, d := range testenv.Devices(t) {
		t.Run(d.Name, func(t *testing.T) {
			link := d.Name + "/1"
			b, err := exec.Command(iproute2, "statistic", "show", "link", link).CombinedOutput()
			theirs := string(b)
			ours := rdma(t, "statistic", "show", "link", link)
			t.Logf("iproute2: %q (%v)\nours: %q", theirs, err, ours)
			o := fields(t, ours, 2)["link "+link]
			if o == nil {
				t.Fatalf("no line for %s in %q", link, ours)
			}
			if d.Driver == "siw" {
				// siw keeps no hw counters: iproute2 prints nothing or
				// fails, we print the bare link.
				if len(o) != 0 {
					t.Errorf("siw counters %v, want none", o)
				}
				return
			}
			if err != nil {
				t.Fatalf("iproute2 rdma statistic show link %s: %v: %s", link, err, b)
			}
			th := fields(t, theirs, 2)["link "+link]
			both := 0
			for name, v := range th {
				if ov, ok := o[name]; ok {
					both++
					if ov != v {
						t.Errorf("%s: ours %s, iproute2 %s", name, ov, v)
					}
				}
			}
			if len(o) != len(th) {
				t.Errorf("%d counters in common; ours %d, iproute2's %d", both, len(o), len(th))
			}
			if d.Hardware() {
				// Its counters are its driver's: iproute2's are the
				// reference, name for name.
				if both != len(th) {
					t.Errorf("%d counters in common, iproute2 has %d", both, len(th))
				}
				return
			}
			// rxe's 15 counters of Linux 6.1 (rxe_hw_counters.c) are all in sysfs.
			if both < 15 {
				t.Errorf("%d counters in common, want rxe's 15 at least", both)
			}
			if _, ok := o["sent_pkts"]; !ok {
				t.Errorf("no sent_pkts on rxe: %v", o)
			}
		})
	}
}
