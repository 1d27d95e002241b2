package rsocket_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rsocket"
)

// TestHTTP serves requests with net/http over an rsocket listener and
// sends them with an http.Client whose transport dials rsockets: several
// requests on one kept-alive connection, a large body each way, then the
// server's Shutdown.
func TestHTTP(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		l, err := rsocket.Listen("rdma", net.JoinHostPort(d.Addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s over %s", r.URL.Query().Get("name"), r.RemoteAddr[:strings.LastIndexByte(r.RemoteAddr, ':')])
		})
		mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(w, r.Body)
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		t.Cleanup(func() { srv.Close() }) // when the test fails before Shutdown

		tr := &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return rsocket.Dial(ctx, "rdma", addr)
		}}
		t.Cleanup(tr.CloseIdleConnections)
		client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
		base := "http://" + l.Addr().String()
		for i := range 3 {
			resp, err := client.Get(fmt.Sprintf("%s/hello?name=n%d", base, i))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("hello n%d over %s", i, d.Addr); err != nil || string(body) != want {
				t.Fatalf("GET: %q, %v; want %q", body, err, want)
			}
		}
		want := pattern(3<<20, 5)
		resp, err := client.Post(base+"/echo", "application/octet-stream", strings.NewReader(string(want)))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != string(want) {
			t.Fatalf("POST echo: %d bytes, %v", len(body), err)
		}
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Serve: %v", err)
		}
	})
}
