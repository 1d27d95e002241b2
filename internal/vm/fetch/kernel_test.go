package fetch

import (
	"fmt"
	"regexp"
	"testing"
)

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

func TestNewestImage(t *testing.T) {
	names := "linux-image-6.18.12+deb13-amd64\nlinux-image-6.18.12+deb13-cloud-amd64\nlinux-image-6.18.15+deb13-rt-amd64\n" +
		"linux-image-6.18.9+deb13-amd64\nlinux-image-6.18.15+deb13-amd64\nlinux-image-6.19.2+deb13-amd64\nlinux-image-6.18.15+deb13-arm64\n" +
		"linux-image-7.2.12+deb13-amd64\nlinux-image-7.3.4+deb13-amd64\nlinux-image-7.3.4+deb13-amd64-dbg\nlinux-image-7.10.1+deb13-arm64\nlinux-image-7.9.20+deb13-arm64\n"
	for _, tc := range []struct {
		series, arch, want string
		err                bool
	}{
		{"6.18", "amd64", "6.18.15+deb13-amd64", false},
		{"6.18", "arm64", "6.18.15+deb13-arm64", false},
		{"6.18", "riscv64", "", true},
		{"7", "amd64", "7.3.4+deb13-amd64", false},
		{"7", "arm64", "7.10.1+deb13-arm64", false},
	} {
		pattern := regexp.MustCompile(fmt.Sprintf(privateSeries[tc.series].image, regexp.QuoteMeta(tc.arch)))
		got, err := newestImage(names, pattern)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: newestImage = %q, %v; want %q, error %v", tc.arch, got, err, tc.want, tc.err)
		}
	}
}
