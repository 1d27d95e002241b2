package plan

import (
	"slices"
	"testing"
)

func TestDevicesFor(t *testing.T) {
	for _, tc := range []struct {
		arch string
		want []string
	}{
		{"amd64", []string{"rxe0", "siw0"}},
		{"arm64", []string{"rxe0"}},
	} {
		var got []string
		for _, d := range DevicesFor(tc.arch) {
			got = append(got, d.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("DevicesFor(%s) = %q, want %q", tc.arch, got, tc.want)
		}
	}
}
