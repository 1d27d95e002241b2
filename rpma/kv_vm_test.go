package rpma_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/rpma"
)

// TestKeyValue runs the key-value service of Example_keyValue (its
// server and client, example_kv_test.go) on every device: PUTs then GETs
// of a table of keys, a refused key, and GETs of one key while another
// goroutine PUTs it 500 times on the same connection, each of which
// must see one whole value, never a mix of two (the seqlock).
func TestKeyValue(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		// A minute: 500 PUTs each way over TCG take seconds on siw.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		l, err := rpma.Listen(net.JoinHostPort(d.Addr, "0"), &rpma.ListenOptions{Region: kvSlots * kvSlotSize, RegionUsage: rpma.UsageReadSrc})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addr, err := l.Addr()
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- serveKV(ctx, l) }()
		kv, err := dialKV(ctx, addr.String())
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name  string
			key   int
			value string
		}{
			{"first key", 0, "zero"},
			{"last key", kvSlots - 1, "last"},
			{"a whole value", 5, string(bytes.Repeat([]byte("v"), kvValueSize))},
			{"an overwrite", 0, "zero again"},
			{"an empty value", 9, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if err := kv.Put(ctx, tt.key, []byte(tt.value)); err != nil {
					t.Fatal(err)
				}
				got, err := kv.Get(ctx, tt.key)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tt.value {
					t.Errorf("get %d = %q, want %q", tt.key, got, tt.value)
				}
			})
		}
		if err := kv.Put(ctx, kvSlots, []byte("out of the table")); err == nil {
			t.Error("a put of a key past the table succeeded")
		}

		t.Run("gets during puts", func(t *testing.T) {
			const key, puts = 3, 500
			var wg sync.WaitGroup
			putErr := make(chan error, 1)
			done := make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(done)
				for i := range puts {
					// Every byte of value i is the same: a torn read
					// shows two different bytes.
					if err := kv.Put(ctx, key, bytes.Repeat([]byte{byte('A' + i%26)}, kvValueSize)); err != nil {
						putErr <- err
						return
					}
				}
			}()
			gets := 0
			for running := true; running; gets++ {
				select {
				case <-done:
					running = false
				default:
				}
				v, err := kv.Get(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if len(v) > 0 && (len(v) != kvValueSize || bytes.Count(v, v[:1]) != kvValueSize) {
					t.Fatalf("get %d returned a torn value %q", gets, v)
				}
			}
			wg.Wait()
			select {
			case err := <-putErr:
				t.Fatal(err)
			default:
			}
			t.Logf("%d gets during %d puts, none torn", gets, puts)
		})

		if err := kv.Close(); err != nil {
			t.Fatal(err)
		}
		cancel()
		// The server's Recv ends with the context, or with the
		// connection: closed, ended (the client's disconnect), or its
		// receives flushed.
		if err := <-served; !errors.Is(err, context.Canceled) && !errors.Is(err, rpma.ErrClosed) &&
			!errors.Is(err, rdmacm.ErrDisconnected) && !errors.Is(err, cq.ErrCompletion) {
			t.Errorf("the server returned %v", err)
		}
	})
}

// TestKeyValueStoreSlot checks the writer's side of the seqlock on the
// host: versions even after each store and one step (2) apart, the
// value between them, padded with zeros.
func TestKeyValueStoreSlot(t *testing.T) {
	slot := make([]byte, kvSlotSize+8)[8:] // 8-byte aligned, as in the region
	for i, v := range []string{"a", "", string(bytes.Repeat([]byte("x"), kvValueSize))} {
		storeSlot(slot, []byte(v))
		head, tail := slot[:8], slot[kvSlotSize-8:]
		want := fmt.Sprintf("%d", 2*(i+1))
		if got := fmt.Sprintf("%d", head[0]); got != want || !bytes.Equal(head, tail) {
			t.Errorf("store %d: versions %v and %v, want both %s", i, head, tail, want)
		}
		if got := bytes.TrimRight(slot[8:kvSlotSize-8], "\x00"); string(got) != v {
			t.Errorf("store %d: value %q, want %q", i, got, v)
		}
	}
}
