package rdmacm

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSockaddrConstants checks addr.go's own copies of Linux's constants,
// kept so that the file builds on every GOOS, against x/sys/unix.
func TestSockaddrConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"AF_INET", afInet, unix.AF_INET},
		{"AF_INET6", afInet6, unix.AF_INET6},
		{"SizeofSockaddrInet4", sizeofSockaddrInet4, unix.SizeofSockaddrInet4},
		{"SizeofSockaddrInet6", sizeofSockaddrInet6, unix.SizeofSockaddrInet6},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}
