package testenv

import "testing"

func TestParseRelease(t *testing.T) {
	for _, c := range []struct {
		release      string
		major, minor int
		ok           bool
	}{
		{"6.1.0-56-amd64", 6, 1, true},
		{"6.12.117+deb12-amd64", 6, 12, true},
		{"7.0.2+deb13-arm64", 7, 0, true},
		{"6", 0, 0, false},
		{"", 0, 0, false},
	} {
		major, minor, ok := parseRelease(c.release)
		if major != c.major || minor != c.minor || ok != c.ok {
			t.Errorf("parseRelease(%q) = %d, %d, %v, want %d, %d, %v", c.release, major, minor, ok, c.major, c.minor, c.ok)
		}
	}
}
