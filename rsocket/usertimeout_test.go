package rsocket

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestCheckProgress drives the user timeout's check on a Conn without a
// device: what counts as outstanding, what resets the idle time, and when
// the connection fails.
func TestCheckProgress(t *testing.T) {
	const tick, limit = 10 * time.Millisecond, 40 * time.Millisecond
	cases := []struct {
		name string
		// sqeFree and ctrlFree are the free data and control slots of a
		// send queue of 16 (12 data, 4 control), each tick's.
		sqeFree, ctrlFree []int
		comps             []uint64 // the send completion count each tick
		failAt            int      // the tick (from 1) that fails; 0 none
	}{
		{"idle queue never fails", []int{12, 12, 12, 12, 12, 12}, []int{4, 4, 4, 4, 4, 4}, []uint64{0, 0, 0, 0, 0, 0}, 0},
		{"stuck data send fails at the limit", []int{11, 11, 11, 11, 11, 11}, []int{4, 4, 4, 4, 4, 4}, []uint64{0, 0, 0, 0, 0, 0}, 4},
		{"stuck keepalive fails at the limit", []int{12, 12, 12, 12, 12, 12}, []int{3, 3, 3, 3, 3, 3}, []uint64{5, 5, 5, 5, 5, 5}, 5},
		{"completions keep it alive", []int{11, 11, 11, 11, 11, 11}, []int{4, 4, 4, 4, 4, 4}, []uint64{1, 2, 3, 4, 5, 6}, 0},
		{"progress resets the idle time", []int{11, 11, 11, 11, 11, 11, 11, 11}, []int{4, 4, 4, 4, 4, 4, 4, 4}, []uint64{0, 0, 0, 1, 1, 1, 1, 1}, 8},
		{"drained queue resets the idle time", []int{11, 11, 11, 12, 11, 11, 11, 11}, []int{4, 4, 4, 4, 4, 4, 4, 4}, []uint64{0, 0, 0, 0, 0, 0, 0, 0}, 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Conn{readSig: make(chan struct{}, 1), writeSig: make(chan struct{}, 1), closed: make(chan struct{}),
				stream:  stream{sqSize: 16, ctrlMax: 4, state: stConnected | stReadable | stWritable},
				utLimit: limit, utTick: tick, ut: time.NewTimer(time.Hour)}
			defer c.ut.Stop()
			failed := 0
			for i := range tc.sqeFree {
				c.sqeAvail, c.ctrlSeq, c.sendComps = tc.sqeFree[i], uint32(4-tc.ctrlFree[i]), tc.comps[i]
				c.checkProgress()
				if c.err != nil && failed == 0 {
					failed = i + 1
				}
			}
			if failed != tc.failAt {
				t.Fatalf("failed at tick %d, want %d (err %v)", failed, tc.failAt, c.err)
			}
			if failed == 0 {
				return
			}
			if !errors.Is(c.err, syscall.ETIMEDOUT) || c.state != 0 {
				t.Errorf("after the timeout: err %v, state %#x; want ETIMEDOUT and state 0", c.err, c.state)
			}
			select {
			case <-c.readSig:
			default:
				t.Error("a blocked Read was not woken")
			}
			select {
			case <-c.writeSig:
			default:
				t.Error("a blocked Write was not woken")
			}
		})
	}
}
