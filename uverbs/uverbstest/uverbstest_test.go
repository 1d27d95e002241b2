package uverbstest

import (
	"strings"
	"testing"
)

// TestLookup reads the environment rdmavm's guests set; the device
// checks against /sys fail on a host without RDMA devices by design.
func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		driver  string
		wantErr string
	}{
		{"unnamed", map[string]string{"PURERDMA_RXE": ""}, "rxe", "the guest has no rxe device"},
		{"not in the kernel", map[string]string{"PURERDMA_SIW": "nosuchdev0", "PURERDMA_SIW_ADDR": "192.168.78.1"}, "siw", "siw device nosuchdev0 is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			d, err := Lookup(tc.driver)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Lookup(%q) = %+v, %v; want an error with %q", tc.driver, d, err, tc.wantErr)
			}
			if d.Driver != tc.driver || d.Addr != tc.env["PURERDMA_"+strings.ToUpper(tc.driver)+"_ADDR"] {
				t.Errorf("Lookup(%q) read %+v from %v", tc.driver, d, tc.env)
			}
		})
	}
}

func TestDrivers(t *testing.T) {
	t.Setenv("PURERDMA_RXE", "rxe0")
	t.Setenv("PURERDMA_SIW", "")
	if got := Drivers(); len(got) != 1 || got[0] != "rxe" {
		t.Errorf("Drivers() = %v, want [rxe]", got)
	}
}

func TestLookupPair(t *testing.T) {
	t.Setenv("PURERDMA_PAIR", "")
	if _, ok, err := LookupPair(); ok || err != nil {
		t.Errorf("outside a pair: ok %v, err %v; want false, nil", ok, err)
	}
	t.Setenv("PURERDMA_PAIR", "b")
	t.Setenv("PURERDMA_PAIR_ROLE", "observer")
	if _, ok, err := LookupPair(); !ok || err == nil || !strings.Contains(err.Error(), "want server or client") {
		t.Errorf("a bad role: ok %v, err %v; want true and the role named", ok, err)
	}
	t.Setenv("PURERDMA_PAIR_ROLE", "client")
	if _, _, err := LookupPair(); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("no peer or address: %v, want incomplete", err)
	}
}

// TestOutsideAGuest: every helper skips, so a user's go test ./... on a
// laptop passes without a device, and says how to run it.
func TestOutsideAGuest(t *testing.T) {
	t.Setenv("PURERDMA_VM", "")
	t.Setenv("PURERDMA_PAIR", "")
	for name, f := range map[string]func(t *testing.T){
		"Require":     func(t *testing.T) { Require(t, "rxe") },
		"All":         func(t *testing.T) { All(t) },
		"CTool":       func(t *testing.T) { CTool(t, "rping") },
		"RequirePair": func(t *testing.T) { RequirePair(t) },
	} {
		var skipped bool
		t.Run(name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			f(t)
		})
		if !skipped {
			t.Errorf("%s outside a guest did not skip", name)
		}
	}
}
