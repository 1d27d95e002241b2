package perftest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Result is one size of a run, from rperf (its -json objects) or read
// from a perftest C tool's table. Latencies are in usec, bandwidths in
// perftest's MB/sec (2^20 bytes per second), message rates in Mpps.
type Result struct {
	Test     string  `json:"test"`
	Bytes    int     `json:"bytes"`
	Iters    int     `json:"iters"`
	TMin     float64 `json:"t_min_us,omitempty"`
	TMax     float64 `json:"t_max_us,omitempty"`
	TTypical float64 `json:"t_typical_us"`
	TAvg     float64 `json:"t_avg_us"`
	TStdev   float64 `json:"t_stdev_us,omitempty"`
	P99      float64 `json:"p99_us"`
	P999     float64 `json:"p99_9_us,omitempty"`
	BWPeak   float64 `json:"bw_peak_MBps,omitempty"`
	BWAvg    float64 `json:"bw_avg_MBps"`
	MsgRate  float64 `json:"msg_rate_Mpps"`
}

// ParseOutput reads the results of one run: perftest's or rperf's table
// (a latency or a bandwidth header followed by one row per size), or
// rperf's -json lines. test names the run in the results (perftest's
// output does not say which test it was: "write_lat", "ib_write_lat"...).
// Both the "[MB/sec]" and the newer "[MiB/sec]" headers are accepted; the
// "[Gb/sec]" one (perftest's --report_gbits) is converted to MB/sec.
func ParseOutput(test, out string) ([]Result, error) {
	test = strings.TrimPrefix(test, "ib_")
	var res []Result
	const (
		none = iota
		lat
		bw
	)
	mode := none
	gbits := false
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(text, "{"):
			var r Result
			if err := json.Unmarshal([]byte(text), &r); err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			res = append(res, r)
			continue
		case strings.HasPrefix(text, "#bytes #iterations") && strings.Contains(text, "t_typical"):
			mode = lat
			continue
		case strings.HasPrefix(text, "#bytes") && strings.Contains(text, "BW average"):
			if strings.Contains(text, "#sl") || strings.Contains(text, "Port1") {
				return nil, fmt.Errorf("line %d: unsupported table (QoS or per port): %q", line, text)
			}
			mode, gbits = bw, strings.Contains(text, "Gb/sec")
			continue
		}
		if mode == none || text == "" || text[0] < '0' || text[0] > '9' {
			continue
		}
		f := strings.Fields(text)
		nums := make([]float64, len(f))
		for i, s := range f {
			// glibc prints "inf" and "-nan" when perftest's CPU
			// frequency is 0; Go parses "inf" and "nan" only.
			if strings.EqualFold(strings.TrimLeft(s, "+-"), "nan") {
				s = "nan"
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: field %d %q: %v", line, i+1, s, err)
			}
			nums[i] = v
		}
		r := Result{Test: test}
		switch mode {
		case lat:
			// 9 columns, a 10th with CPU utilization.
			if len(nums) < 9 {
				return nil, fmt.Errorf("line %d: %d fields in a latency row, want 9: %q", line, len(nums), text)
			}
			r.Bytes, r.Iters = int(nums[0]), int(nums[1])
			r.TMin, r.TMax, r.TTypical, r.TAvg, r.TStdev, r.P99, r.P999 = nums[2], nums[3], nums[4], nums[5], nums[6], nums[7], nums[8]
		case bw:
			if len(nums) < 5 {
				return nil, fmt.Errorf("line %d: %d fields in a bandwidth row, want 5: %q", line, len(nums), text)
			}
			r.Bytes, r.Iters = int(nums[0]), int(nums[1])
			r.BWPeak, r.BWAvg, r.MsgRate = nums[2], nums[3], nums[4]
			if gbits {
				// Gb/sec is 1e9/8 bytes per second.
				r.BWPeak *= 125000000.0 / MiB
				r.BWAvg *= 125000000.0 / MiB
			}
		}
		res = append(res, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("no result rows in the output")
	}
	return res, nil
}

// ResultLine is perftest's RESULT_LINE, around the banner and the table.
var ResultLine = strings.Repeat("-", 87) + "\n"

// LatHeader is RESULT_FMT_LAT, BWHeader RESULT_FMT: the tables' headers.
const (
	LatHeader = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
	BWHeader  = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
)

// FormatLatRow is REPORT_FMT_LAT, a row of the latency table.
func FormatLatRow(r Result) string {
	return fmt.Sprintf(" %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
		r.Bytes, r.Iters, r.TMin, r.TMax, r.TTypical, r.TAvg, r.TStdev, r.P99, r.P999)
}

// FormatBWRow is REPORT_FMT, a row of the bandwidth table.
func FormatBWRow(r Result) string {
	return fmt.Sprintf(" %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f\n",
		r.Bytes, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate)
}
