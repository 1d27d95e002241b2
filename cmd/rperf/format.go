package main

import (
	"fmt"
	"io"

	"github.com/purerdma/purerdma/internal/perftest"
)

// printBanner prints a short form of perftest's preamble and the header.
func printBanner(w io.Writer, s *session) {
	t := perftest.Tests[s.o.test]
	fmt.Fprint(w, perftest.ResultLine)
	fmt.Fprintf(w, "                    %s (rperf, Go)\n", t.Title)
	fmt.Fprintf(w, " Device         : %s\n", s.r.ctx.Device().Name)
	fmt.Fprintf(w, " Connection type : RC\t\tUsing SRQ      : OFF\n")
	if !t.Lat {
		fmt.Fprintf(w, " TX depth        : %d\n", s.o.txDepth)
		fmt.Fprintf(w, " CQ Moderation   : %d\n", s.cqMod)
	}
	fmt.Fprintf(w, " Mtu             : %d[B]\n", s.r.port.ActiveMTU.Bytes())
	fmt.Fprintf(w, " Max inline data : %d[B]\n", s.r.inline)
	fmt.Fprintf(w, " local address: LID %#04x QPN %#06x PSN %#06x RKey %#08x VAddr %#016x GID %s\n",
		s.r.port.LID, s.r.qp.Num(), s.psn, s.r.mr.RKey(), s.r.mr.Addr()+uint64(s.r.half), s.r.gid)
	fmt.Fprintf(w, " remote address: LID %#04x QPN %#06x PSN %#06x RKey %#08x VAddr %#016x GID %s\n",
		s.rem.lid, s.rem.qpn, s.rem.psn, s.rem.rkey, s.rem.addr, s.rem.gid)
	fmt.Fprint(w, perftest.ResultLine)
	if t.Lat {
		fmt.Fprintln(w, perftest.LatHeader)
	} else {
		fmt.Fprintln(w, perftest.BWHeader)
	}
}
