package netport

import (
	"net"
	"runtime"
	"strconv"
	"testing"
)

func TestFreeAndListening(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/net/tcp")
	}
	port, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	if Listening(port) {
		t.Fatalf("port %d listens before anyone listens on it", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	if !Listening(port) {
		t.Errorf("port %d does not show as listening", port)
	}
	l.Close()
	if Listening(port) {
		t.Errorf("port %d still listens after close", port)
	}
}
