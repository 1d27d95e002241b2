package vm

import "testing"

// TestEarlyDeath tells a kernel that died before init from a guest whose
// init ran (and may have panicked the kernel itself, which is a failure
// of the code under test and never booted again).
func TestEarlyDeath(t *testing.T) {
	tests := []struct {
		name    string
		console []string
		want    bool
	}{
		{"int3 at boot", []string{
			"[    3.375172] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI",
			"[    3.376641] RIP: 0010:sched_clock_cpu+0x9/0x190",
			"[    3.383863] Kernel panic - not syncing: Fatal exception in interrupt",
		}, true},
		{"panic after init started", []string{
			"purerdma-vm: amd64 guest up in 4.1s: rxe0 siw0",
			"=== purerdma-vm: run uverbs (amd64, Linux 6.12.117+deb12-amd64)",
			"[   40.1] Kernel panic - not syncing: Fatal exception",
		}, false},
		{"pair guest", []string{"purerdma-pair: mark a", "[ 9.0] Kernel panic - not syncing: x"}, false},
		{"no panic", []string{"[    3.0] Run /init as init process"}, false},
		{"nothing", nil, false},
	}
	for _, tt := range tests {
		var e earlyDeath
		for _, l := range tt.console {
			e.see(l)
		}
		if got := e.died(); got != tt.want {
			t.Errorf("%s: died %v, want %v", tt.name, got, tt.want)
		}
	}
}
