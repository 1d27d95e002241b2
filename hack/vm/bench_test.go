package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseBench(t *testing.T) {
	const table = "| test | bytes | metric | Go (median) | C (median) | Go/C | rounds |\n" +
		"|---|---:|---|---:|---:|---:|---:|\n" +
		"| write_lat | 2 | t_typical usec (lower is better) | 50.00 | 40.00 | 1.25 | 5 |\n"
	for _, tc := range []struct {
		name      string
		out       string
		table     string
		info      map[string]string
		wantError bool
	}{
		{name: "nothing", out: "booting\npurerdma-vm: exit status 1\n", wantError: true},
		{name: "no end", out: "BENCH-BEGIN\n" + table, wantError: true},
		{name: "empty table", out: "BENCH-BEGIN\nBENCH-END\n", wantError: true},
		{
			name: "full",
			out: "=== purerdma-vm: run benchcmp compare (amd64)\r\n" +
				"BENCH-INFO: kernel=6.1.0-56-amd64\r\n" +
				"BENCH-INFO: device=rxe0 gid_index=1 rounds=5 sizes=2,64\n" +
				"BENCH-INFO: iterations=latency 1000, bandwidth 2000\n" +
				"compare: write_lat 2 B round 1/5 Go: 50.00 (1s)\n" +
				"BENCH-INFO: elapsed=4m2s\n" +
				"BENCH-BEGIN\r\n" + strings.ReplaceAll(table, "\n", "\r\n") + "BENCH-END\r\n" +
				"purerdma-vm: exit status 0\n",
			table: table,
			info: map[string]string{"kernel": "6.1.0-56-amd64", "device": "rxe0", "gid_index": "1", "rounds": "5",
				"sizes": "2,64", "iterations": "latency 1000, bandwidth 2000", "elapsed": "4m2s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, info, err := parseBench(tc.out)
			if (err != nil) != tc.wantError {
				t.Fatalf("error %v, want error %v", err, tc.wantError)
			}
			if err != nil {
				return
			}
			if table != tc.table {
				t.Errorf("table:\n%q\nwant:\n%q", table, tc.table)
			}
			for k, v := range tc.info {
				if info[k] != v {
					t.Errorf("info[%q] = %q, want %q", k, info[k], v)
				}
			}
			if len(info) != len(tc.info) {
				t.Errorf("info %v, want %v", info, tc.info)
			}
		})
	}
}

func TestRenderBench(t *testing.T) {
	date := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	h := hostDesc{cpu: "Some CPU @ 2.80GHz", cores: 2, kernel: "Linux 6.8.0 x86_64"}
	info := map[string]string{"kernel": "6.1.0-56-amd64", "rounds": "5", "iterations": "latency 1000"}
	md := renderBench(date, h, info, "| t |\n|---|\n| x |\n", 7*time.Minute)
	for _, want := range []string{
		"# rperf against perftest",
		"2025-03-04 05:06 UTC",
		"Some CPU @ 2.80GHz, 2 cores, Linux 6.8.0 x86_64",
		"Linux 6.1.0-56-amd64; QEMU TCG (no KVM), soft-RoCE rxe0, loopback in one guest",
		"Rounds: 5 per side",
		"Iterations per run: latency 1000",
		"GID index unknown",
		"the whole boot 7m0s",
		"\n| t |\n|---|\n| x |\n",
		"the ratio from one boot is the figure that counts",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

func TestBetween(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      string
		ok        bool
	}{
		{"one section", "x\nB\na\nb \r\nE\ny\n", "a\nb\n", true},
		{"the last section", "B\nold\nE\nB\nnew\nE\n", "new\n", true},
		{"no end", "B\na\n", "", false},
		{"end first", "E\nB\n", "", false},
		{"empty section", "B\nE\n", "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := between(tc.out, "B", "E")
			if got != tc.want || ok != tc.ok {
				t.Errorf("between = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestBenchFile(t *testing.T) {
	for _, tc := range []struct {
		series string
		info   map[string]string
		want   string
	}{
		{"", nil, "docs/benchmarks.md"},
		{"6.1", map[string]string{"kernel": "6.1.0"}, "docs/benchmarks.md"},
		{"6.12", nil, "docs/benchmarks-linux-6.12.md"},
		{"6.1", map[string]string{"aa": "C in both columns"}, "docs/benchmarks-aa.md"},
		{"6.12", map[string]string{"aa": "C in both columns"}, "docs/benchmarks-aa-linux-6.12.md"},
		{"6.12", map[string]string{"cross": "Go clients against C servers"}, "docs/benchmarks-cross-linux-6.12.md"},
	} {
		if got := benchFile(tc.series, benchVariant(tc.info)); got != tc.want {
			t.Errorf("benchFile(%q, %v) = %q, want %q", tc.series, tc.info, got, tc.want)
		}
	}
}
