package rsocket_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

// TestRPCExample runs Example_rpc's server and client on each device:
// several clients at once, each with calls of its own, then the
// listener's Close ends the server.
func TestRPCExample(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		l, err := rsocket.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- serveRPC(l) }()
		defer func() {
			l.Close()
			if err := <-served; err != nil {
				t.Errorf("serveRPC: %v", err)
			}
		}()

		// A guard against a hang, not a timing assertion.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for c := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 4 {
					s := fmt.Sprintf("client %d call %d over %s", c, i, d.Name)
					got, err := callRPC(ctx, l.Addr().String(), s)
					if want := fmt.Sprintf("CLIENT %d CALL %d OVER %s", c, i, strings.ToUpper(d.Name)); err != nil || got != want {
						t.Errorf("Upper(%q) = %q, %v; want %q", s, got, err, want)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}
