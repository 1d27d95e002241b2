package uverbs

import (
	"strings"
	"testing"
)

// FuzzParseGUID reads arbitrary text as a node GUID from sysfs. A GUID
// that parses prints as the input with each group padded to four digits
// in lower case, and that parses to the same GUID.
func FuzzParseGUID(f *testing.F) {
	for _, s := range []string{"5054:00ff:fe12:3456", "0:0:0:1", "FFFF:ffff:ffff:ffff", "5054:00ff:fe12", "1:2:3:4:5", "+1:2:3:4", "0x1:2:3:4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGUID(s)
		if err != nil {
			return
		}
		groups := strings.Split(s, ":")
		for i, grp := range groups {
			groups[i] = strings.Repeat("0", 4-len(grp)) + strings.ToLower(grp)
		}
		if want := strings.Join(groups, ":"); g.String() != want {
			t.Fatalf("ParseGUID(%q) prints as %q, want %q", s, g, want)
		}
		if again, err := ParseGUID(g.String()); err != nil || again != g {
			t.Fatalf("ParseGUID(%q) = %v, %v; want %v", g.String(), again, err, g)
		}
	})
}
