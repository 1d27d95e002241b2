package perftest

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseOutput reads arbitrary text as a perftest or rperf output.
// When it parses, every row is named after the test unless it is a -json
// line, each result survives rperf's -json encoding unchanged, and a
// table row printed again as perftest prints it parses to the same row.
func FuzzParseOutput(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.TrimSuffix(filepath.Base(name), ".txt"), string(b))
	}
	b, _ := json.Marshal(Result{Test: "write_bw", Bytes: 65536, Iters: 5000, BWPeak: 1234.5, BWAvg: 1200.25, MsgRate: 0.019204})
	f.Add("write_bw", string(b)+"\n")
	f.Add("ib_write_lat", LatHeader+"\n 64      200          inf            inf          inf      \t       inf         \t-nan   \t\tinf     \t\tinf    \n")
	f.Add("ib_send_bw", strings.Replace(BWHeader, "MB/sec", "Gb/sec", 2)+"\n 65536 1000 1.5 1.25 0.002\n")
	f.Fuzz(func(t *testing.T, test, out string) {
		rs, err := ParseOutput(test, out)
		if err != nil {
			return
		}
		if len(rs) == 0 {
			t.Fatal("no results and no error")
		}
		name := strings.TrimPrefix(test, "ib_")
		var lines []string
		for _, r := range rs {
			b, err := json.Marshal(r)
			if err != nil || !utf8.ValidString(r.Test) {
				return // NaN, an infinity or a name that is not UTF-8: -json never prints those
			}
			lines = append(lines, string(b))
			if r.Test == name && r.Bytes >= 0 && r.Iters >= 0 {
				checkRow(t, r)
			}
		}
		again, err := ParseOutput("other", strings.Join(lines, "\n"))
		if err != nil || !reflect.DeepEqual(again, rs) {
			t.Fatalf("-json round trip: %+v, %v; want %+v", again, err, rs)
		}
	})
}

// checkRow prints r as perftest's latency or bandwidth row, whichever it
// came from, and checks that the row reads back to what it printed.
func checkRow(t *testing.T, r Result) {
	t.Helper()
	header, format := LatHeader, FormatLatRow
	if r.TTypical == 0 && r.TAvg == 0 && r.P99 == 0 && (r.BWPeak != 0 || r.BWAvg != 0 || r.MsgRate != 0) {
		header, format = BWHeader, FormatBWRow
	}
	row := format(r)
	got, err := ParseOutput(r.Test, header+"\n"+row)
	if err != nil || len(got) != 1 {
		t.Fatalf("row %q of %+v reads as %+v, %v", row, r, got, err)
	}
	if again := format(got[0]); again != row {
		t.Fatalf("row %q reads back and prints as %q", row, again)
	}
}

// FuzzParseRPMAResult reads arbitrary text as the output of an rpma
// benchmark peer, Go's or C's. A RESULT line that parses prints as one
// that parses to the same result.
func FuzzParseRPMAResult(f *testing.F) {
	f.Add("listening\nRESULT test=read bytes=64 iters=1000 median_us=12.345\n")
	f.Add("RESULT test=write bytes=4096 iters=10 median_us=NaN extra=1\n")
	f.Add("RESULT test=sendrecv bytes=1\n")
	f.Add("RESULT bytes\n")
	f.Fuzz(func(t *testing.T, out string) {
		r, err := ParseRPMAResult(out)
		if err != nil {
			return
		}
		line := r.String()
		again, err := ParseRPMAResult(line)
		if err != nil || again.String() != line || again.Test != r.Test || again.Bytes != r.Bytes || again.Iters != r.Iters {
			t.Fatalf("%+v prints as %q, which parses as %+v, %v", r, line, again, err)
		}
		if !math.IsNaN(r.MedianUS) && math.Abs(again.MedianUS-r.MedianUS) > 0.0005*math.Max(1, math.Abs(r.MedianUS)) {
			t.Fatalf("median %v prints as %q", r.MedianUS, line)
		}
	})
}
