package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// BenchmarkRstream runs the Go and the C rstream against each other and
// themselves on rxe, latency tests (ping-pong) and bandwidth tests (one
// way) at 64 B, 4 KiB and 64 KiB, and reports the client's Gb/sec and usec/xfer
// columns. b.N is not used: each run is one rstream test of fixed size,
// as the C tool measures.
func BenchmarkRstream(b *testing.B) {
	ctool := testenv.CSide("rstream", testenv.CTool(b, "rstream"))
	d := testenv.RoCE(b)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"lat64", []string{"-S", "64", "-C", "1", "-I", "2000", "-T", "b", "-i", "64"}},
		{"lat4k", []string{"-S", "4096", "-C", "1", "-I", "1000", "-T", "b"}},
		{"lat64k", []string{"-S", "65536", "-C", "1", "-I", "300", "-T", "b"}},
		{"bw64", []string{"-S", "64", "-C", "20000", "-I", "1", "-T", "b"}},
		{"bw4k", []string{"-S", "4096", "-C", "10000", "-I", "1", "-T", "b"}},
		{"bw64k", []string{"-S", "65536", "-C", "2000", "-I", "1", "-T", "b"}},
	} {
		for _, p := range []struct {
			name           string
			server, client testenv.Side
		}{{"C-C", ctool, ctool}, {"Go-Go", goSide, goSide}, {"CServer-GoClient", ctool, goSide}, {"GoServer-CClient", goSide, ctool}} {
			b.Run(tc.name+"/"+p.name, func(b *testing.B) {
				for range b.N {
					srv, cli := runPairB(b, d, p.server, p.client, tc.args)
					if srv.Code != 0 || cli.Code != 0 {
						b.Fatalf("failed:\n%v\n%v", srv, cli)
					}
					lines := strings.Split(strings.TrimSpace(cli.Stdout), "\n")
					f := strings.Fields(lines[len(lines)-1])
					if len(f) != 8 {
						b.Fatalf("result line %q", lines[len(lines)-1])
					}
					gbps, _ := strconv.ParseFloat(f[6], 64)
					usec, _ := strconv.ParseFloat(f[7], 64)
					b.ReportMetric(gbps, "Gb/s")
					b.ReportMetric(usec, "usec/xfer")
				}
			})
		}
	}
}
