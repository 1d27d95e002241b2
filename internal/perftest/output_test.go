package perftest

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatRoundTrip(t *testing.T) {
	lat := Result{Test: "write_lat", Bytes: 2, Iters: 1000, TMin: 1.5, TMax: 20.25, TTypical: 2.5, TAvg: 2.75, TStdev: 0.5, P99: 10, P999: 20}
	bw := Result{Test: "write_bw", Bytes: 65536, Iters: 5000, BWPeak: 1234.5, BWAvg: 1200.25, MsgRate: 0.019204}
	out := ResultLine + LatHeader + "\n" + FormatLatRow(lat) + ResultLine
	if got, err := ParseOutput("write_lat", out); err != nil || len(got) != 1 || got[0] != lat {
		t.Errorf("latency row %q parsed as %+v, %v", FormatLatRow(lat), got, err)
	}
	out = BWHeader + "\n" + FormatBWRow(bw)
	if got, err := ParseOutput("ib_write_bw", out); err != nil || len(got) != 1 || got[0] != bw {
		t.Errorf("BW row %q parsed as %+v, %v", FormatBWRow(bw), got, err)
	}
	// perftest's exact layout.
	if want := " 2       1000          1.50           20.25        2.50     \t       2.75        \t0.50   \t\t10.00   \t\t20.00  \n"; FormatLatRow(lat) != want {
		t.Errorf("latency row %q, want %q", FormatLatRow(lat), want)
	}
	if want := " 65536      5000             1234.50            1200.25\t\t     0.019204\n"; FormatBWRow(bw) != want {
		t.Errorf("BW row %q, want %q", FormatBWRow(bw), want)
	}
	// -json lines parse too.
	b, _ := json.Marshal(bw)
	if got, err := ParseOutput("write_bw", string(b)+"\n"); err != nil || got[0] != bw {
		t.Errorf("json %s parsed as %+v, %v", b, got, err)
	}
	for _, k := range []string{`"test"`, `"bytes"`, `"iters"`, `"t_typical_us"`, `"t_avg_us"`, `"p99_us"`, `"bw_avg_MBps"`, `"msg_rate_Mpps"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("json %s lacks %s", b, k)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, out := range []string{
		"",
		"no table here\n",
		LatHeader + "\n 2 1000 1.0 2.0\n",
		BWHeader + "\n 2 1000 x 2.0 3.0\n",
		" #bytes    #sl      #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n",
	} {
		if rs, err := ParseOutput("x", out); err == nil {
			t.Errorf("ParseOutput(%q) = %+v, want an error", out, rs)
		}
	}
}

// The samples in testdata are perftest's C tools' output, captured in the
// VM (cmd/rperf's TestPerftestCRXE logs them): each names its tool and holds one row.
func TestParseSamples(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no samples in testdata")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tool := strings.SplitN(filepath.Base(f), ".", 2)[0]
		rs, err := ParseOutput(tool, string(b))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		lat := strings.HasSuffix(tool, "_lat")
		for _, r := range rs {
			ok := r.Bytes > 0 && r.Iters > 0 && r.Test == strings.TrimPrefix(tool, "ib_")
			if lat {
				ok = ok && r.TMin > 0 && r.TTypical >= r.TMin && r.TAvg > 0 && r.P99 > 0
			} else {
				// The receiver of send_bw reports no peak.
				ok = ok && r.BWAvg > 0 && r.BWPeak >= 0 && r.MsgRate > 0
			}
			if !ok {
				t.Errorf("%s: implausible %+v", f, r)
			}
		}
		t.Logf("%s: %+v", f, rs)
	}
	// perftest without a CPU frequency (as in the VM, at times) prints
	// inf and -nan.
	rs, err := ParseOutput("ib_write_lat", LatHeader+"\n 64      200          inf            inf          inf      \t       inf         \t-nan   \t\tinf     \t\tinf    \n")
	if err != nil || !math.IsInf(rs[0].TTypical, 1) || !math.IsNaN(rs[0].TStdev) {
		t.Errorf("inf/nan row: %+v, %v", rs, err)
	}
}
