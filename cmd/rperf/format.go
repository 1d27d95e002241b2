package main

import (
	"fmt"
	"io"
	"strings"
)

// resultLine is perftest's RESULT_LINE.
var resultLine = strings.Repeat("-", 87) + "\n"

// latHeader is RESULT_FMT_LAT, bwHeader RESULT_FMT.
const (
	latHeader = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
	bwHeader  = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
)

// formatLatRow is REPORT_FMT_LAT.
func formatLatRow(r Result) string {
	return fmt.Sprintf(" %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
		r.Bytes, r.Iters, r.TMin, r.TMax, r.TTypical, r.TAvg, r.TStdev, r.P99, r.P999)
}

// formatBWRow is REPORT_FMT.
func formatBWRow(r Result) string {
	return fmt.Sprintf(" %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f\n",
		r.Bytes, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate)
}

// printBanner prints a short form of perftest's preamble and the header.
func printBanner(w io.Writer, s *session) {
	t := tests[s.o.test]
	fmt.Fprint(w, resultLine)
	fmt.Fprintf(w, "                    %s (rperf, Go)\n", t.title)
	fmt.Fprintf(w, " Device         : %s\n", s.r.ctx.Device().Name)
	fmt.Fprintf(w, " Connection type : RC\t\tUsing SRQ      : OFF\n")
	if !t.lat {
		fmt.Fprintf(w, " TX depth        : %d\n", s.o.txDepth)
		fmt.Fprintf(w, " CQ Moderation   : %d\n", s.cqMod)
	}
	fmt.Fprintf(w, " Mtu             : %d[B]\n", s.r.port.ActiveMTU.Bytes())
	fmt.Fprintf(w, " Max inline data : %d[B]\n", s.r.inline)
	fmt.Fprintf(w, " local address: LID %#04x QPN %#06x PSN %#06x RKey %#08x VAddr %#016x GID %s\n",
		s.r.port.LID, s.r.qp.Num(), s.psn, s.r.mr.RKey(), s.r.mr.Addr()+uint64(s.r.half), s.r.gid)
	fmt.Fprintf(w, " remote address: LID %#04x QPN %#06x PSN %#06x RKey %#08x VAddr %#016x GID %s\n",
		s.rem.lid, s.rem.qpn, s.rem.psn, s.rem.rkey, s.rem.addr, s.rem.gid)
	fmt.Fprint(w, resultLine)
	if t.lat {
		fmt.Fprintln(w, latHeader)
	} else {
		fmt.Fprintln(w, bwHeader)
	}
}
