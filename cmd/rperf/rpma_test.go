package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseRPMAArgs(t *testing.T) {
	a, err := parseRPMAArgs([]string{"server", "192.168.77.1", "7204", "4096"})
	if err != nil || !a.server || a.addr.String() != "192.168.77.1" || a.port != 7204 || a.size != 4096 {
		t.Errorf("server: %+v, %v", a, err)
	}
	a, err = parseRPMAArgs([]string{"client", "192.168.77.1", "7204", "rpma_write_flush", "64", "100"})
	if err != nil || a.server || a.test != "write_flush" || a.size != 64 || a.iters != 100 || a.emulatedFlush {
		t.Errorf("client: %+v, %v", a, err)
	}
	a, err = parseRPMAArgs([]string{"-emulated-flush", "client", "192.168.77.1", "7204", "write_flush", "64", "100"})
	if err != nil || !a.emulatedFlush || a.test != "write_flush" {
		t.Errorf("client -emulated-flush: %+v, %v", a, err)
	}
	for _, args := range [][]string{
		nil,
		{"server", "192.168.77.1", "7204"},
		{"server", "nowhere", "7204", "64"},
		{"server", "192.168.77.1", "70000", "64"},
		{"server", "192.168.77.1", "7204", "0"},
		{"client", "192.168.77.1", "7204", "write", "64", "100"},
		{"client", "192.168.77.1", "7204", "read", "64", "0"},
		{"client", "192.168.77.1", "7204", "read", "x", "10"},
		{"both", "192.168.77.1", "7204", "64"},
		{"-emulated-flush"},
		{"server", "-emulated-flush", "192.168.77.1", "7204", "64"},
	} {
		if _, err := parseRPMAArgs(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestRPMAUsage(t *testing.T) {
	var o, e bytes.Buffer
	if code := run(t.Context(), []string{"rpma", "client"}, &o, &e); code != 2 || !strings.Contains(e.String(), "rperf rpma [-emulated-flush] server") {
		t.Errorf("exit %d, stderr %q", code, e.String())
	}
}
