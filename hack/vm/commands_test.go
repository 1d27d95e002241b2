package main

import (
	"slices"
	"testing"
	"time"
)

func TestGuestTestFlags(t *testing.T) {
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"-run", "X"}, []string{"-test.timeout=14m0s", "-test.v", "-test.run", "X"}},
		{[]string{"-test.v", "-count=2", "-timeout", "3m"}, []string{"-test.v", "-test.count=2", "-test.timeout", "3m"}},
		// A package's own flag (test/soak) is not go test's: unchanged.
		{[]string{"-soak.duration", "30m", "-test.timeout", "40m"}, []string{"-test.v", "-soak.duration", "30m", "-test.timeout", "40m"}},
		{[]string{"--soak.duration=2m"}, []string{"-test.timeout=14m0s", "-test.v", "--soak.duration=2m"}},
	} {
		if got := guestTestFlags(c.in, 15*time.Minute); !slices.Equal(got, c.want) {
			t.Errorf("guestTestFlags(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
