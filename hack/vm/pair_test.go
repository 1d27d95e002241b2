package main

import "testing"

func TestWantsPowerOff(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		want  bool
	}{
		{nil, true},
		{[]string{"-test.v"}, true},
		{[]string{"-test.run", "TestNetem"}, false},
		{[]string{"-test.run=TestNetem|TestPeerPowerOff"}, true},
		{[]string{"-test.run", "PowerOff/x"}, true},
		{[]string{"-test.run=Test"}, true},
		{[]string{"-test.run=("}, false},
	} {
		if got := wantsPowerOff(tt.flags); got != tt.want {
			t.Errorf("wantsPowerOff(%q) = %v, want %v", tt.flags, got, tt.want)
		}
	}
}
