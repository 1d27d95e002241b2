package fetch

import "testing"

func TestMetapackage(t *testing.T) {
	for _, c := range []struct{ arch, series, want string }{
		{"amd64", "6.1", "linux-image-amd64"},
		{"arm64", "6.1", "linux-image-arm64"},
		{"amd64", "6.12", "linux-image-6.12-amd64"},
		{"arm64", "6.12", "linux-image-6.12-arm64"},
	} {
		if got := metapackage(c.arch, c.series); got != c.want {
			t.Errorf("metapackage(%q, %q) = %q, want %q", c.arch, c.series, got, c.want)
		}
	}
}

func TestInSeries(t *testing.T) {
	for _, c := range []struct {
		version, series string
		want            bool
	}{
		{"6.1.0-56-amd64", "6.1", true},
		{"6.12.117+deb12-amd64", "6.12", true},
		{"6.12.117+deb12-amd64", "6.1", false},
		{"6.1.0-56-amd64", "6.12", false},
		{"6.10.3-amd64", "6.1", false},
		{"7.0.2+deb13-amd64", "7.0", true},
	} {
		if got := inSeries(c.version, c.series); got != c.want {
			t.Errorf("inSeries(%q, %q) = %v, want %v", c.version, c.series, got, c.want)
		}
	}
}
