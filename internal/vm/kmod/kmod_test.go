package kmod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseModinfo(t *testing.T) {
	data := []byte("license=GPL\x00depends=ib_core,ip6-udp-tunnel,\x00retpoline=Y\x00name=rdma_rxe\x00vermagic=6.1.0 SMP\x00")
	got := ParseModinfo(data)
	want := Module{Name: "rdma_rxe", Depends: []string{"ib_core", "ip6_udp_tunnel"}, Vermagic: "6.1.0 SMP"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseModinfo mismatch (-want +got):\n%s", diff)
	}
	if got := ParseModinfo([]byte("depends=\x00")); len(got.Depends) != 0 {
		t.Errorf("empty depends gave %v", got.Depends)
	}
}

func TestNameOf(t *testing.T) {
	for in, want := range map[string]string{
		"/lib/modules/x/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko": "rdma_rxe",
		"ip6_udp_tunnel.ko": "ip6_udp_tunnel",
		"crc32-generic.ko":  "crc32_generic",
		"/lib/modules/6.12.117+deb12-amd64/kernel/drivers/infiniband/core/ib_core.ko.xz": "ib_core",
		"crc32c-generic.ko.zst": "crc32c_generic",
	} {
		if got := NameOf(in); got != want {
			t.Errorf("NameOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsModule(t *testing.T) {
	for name, want := range map[string]bool{
		"rdma_rxe.ko":            true,
		"ib_core.ko.xz":          true,
		"crc32c-generic.ko.zst":  true,
		"modules.dep":            false,
		"siw.ko.gz":              false, // no Debian kernel uses gzip
		"kernel/drivers/foo.xz":  false,
		"kernel/drivers/foo.zst": false,
	} {
		if got := isModule(name); got != want {
			t.Errorf("isModule(%q) = %v, want %v", name, got, want)
		}
	}
}

func names(mods []Module) []string {
	var s []string
	for _, m := range mods {
		s = append(s, m.Name)
	}
	return s
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name    string
		mods    []Module
		want    []string
		wantErr bool
	}{
		{
			name: "rdma stack",
			mods: []Module{
				{Name: "rdma_ucm", Depends: []string{"ib_core", "ib_uverbs", "rdma_cm"}},
				{Name: "rdma_rxe", Depends: []string{"ib_core", "ip6_udp_tunnel", "udp_tunnel", "ib_uverbs"}},
				{Name: "ib_uverbs", Depends: []string{"ib_core"}},
				{Name: "rdma_cm", Depends: []string{"ib_core", "iw_cm", "ib_cm"}},
				{Name: "ib_core"},
				{Name: "iw_cm", Depends: []string{"ib_core"}},
				{Name: "ib_cm", Depends: []string{"ib_core"}},
				{Name: "udp_tunnel"},
				{Name: "ip6_udp_tunnel"},
			},
			want: []string{"ib_core", "ib_cm", "ib_uverbs", "ip6_udp_tunnel", "iw_cm", "rdma_cm", "udp_tunnel", "rdma_rxe", "rdma_ucm"},
		},
		{
			name: "built-in dependency is skipped",
			mods: []Module{{Name: "siw", Depends: []string{"libcrc32c", "ib_core"}}, {Name: "libcrc32c"}},
			want: []string{"libcrc32c", "siw"},
		},
		{
			name:    "cycle",
			mods:    []Module{{Name: "a", Depends: []string{"b"}}, {Name: "b", Depends: []string{"a"}}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Order(tt.mods)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Order() error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("Order() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
