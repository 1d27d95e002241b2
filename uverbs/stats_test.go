package uverbs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPortCounters reads a fake sysfs: hw_counters without lifespan, then
// counters, each by name; a port without either has none.
func TestPortCounters(t *testing.T) {
	root := t.TempDir()
	write := func(path, v string) {
		p := filepath.Join(root, "class/infiniband", path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rxe0/ports/1/hw_counters/sent_pkts", "12\n")
	write("rxe0/ports/1/hw_counters/rcvd_pkts", "7\n")
	write("rxe0/ports/1/hw_counters/lifespan", "10\n")
	write("rxe0/ports/1/counters/port_xmit_data", "18446744073709551615\n")
	write("siw0/ports/1/gids/0", "fe80::\n")
	write("bad0/ports/1/hw_counters/sent_pkts", "many\n")

	got, err := portCounters(root, "rxe0", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Counter{{"rcvd_pkts", 7}, {"sent_pkts", 12}, {"port_xmit_data", 18446744073709551615}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rxe0/1 (-want +got):\n%s", diff)
	}
	if got, err := portCounters(root, "siw0", 1); err != nil || len(got) != 0 {
		t.Errorf("siw0/1 = %v, %v; want none, nil", got, err)
	}
	for _, c := range []struct {
		dev  string
		port int
		want error
	}{
		{"rxe0", 2, ErrInvalid},
		{"rxe0", 0, ErrInvalid},
		{"rxe0", -1, ErrInvalid},
		{"", 1, ErrInvalid},
		{"../rxe0", 1, ErrInvalid},
		{"..", 1, ErrInvalid},
		{"mlx5_0", 1, ErrNoDevice},
	} {
		if _, err := portCounters(root, c.dev, c.port); !errors.Is(err, c.want) {
			t.Errorf("portCounters(%q, %d) = %v, want %v", c.dev, c.port, err, c.want)
		}
	}
	if _, err := portCounters(root, "bad0", 1); err == nil {
		t.Error("a counter that is not a number: no error")
	}
}
