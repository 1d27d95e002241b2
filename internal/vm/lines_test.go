package vm

import (
	"slices"
	"testing"
)

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one write, two lines", []string{"a\nbc\n"}, []string{"a", "bc"}},
		{"a line over three writes, a last one flushed", []string{"ab", "c", "d\ne"}, []string{"abcd", "e"}},
		{"empty lines and carriage returns kept", []string{"\n\r\n"}, []string{"", "\r"}},
		{"nothing whole, then flushed", []string{"abc"}, []string{"abc"}},
		{"nothing left to flush", []string{"abc\n"}, []string{"abc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l Lines
			var got []string
			for _, w := range tc.writes {
				l.Feed([]byte(w), func(s string) { got = append(got, s) })
			}
			l.Flush(func(s string) { got = append(got, s) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines %q, want %q", got, tc.want)
			}
		})
	}
}
