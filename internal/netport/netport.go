// Package netport finds TCP ports for the tools and tests that start a
// server and its client side by side: a free port, and whether a server
// listens on it yet.
package netport

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// Free returns a TCP port that was free a moment ago.
func Free() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Listening reports whether a socket listens on port, from
// /proc/net/tcp{,6}: probing with a connection would use up a server's
// only accept.
func Listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			// sl local_address rem_address st ...; st 0A is LISTEN.
			fields := strings.Fields(line)
			if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
				return true
			}
		}
	}
	return false
}
