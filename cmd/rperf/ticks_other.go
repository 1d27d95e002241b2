//go:build !amd64 && !arm64

package main

import "time"

var tickBase = time.Now()

// ticks is the monotonic clock in ns where rperf has no counter to read.
func ticks() int64 { return int64(time.Since(tickBase)) }
