// Package perftest is what cmd/rperf (perftest's tests in Go) and the
// benchmark harness that runs it against the C tools (hack/benchcmp) must
// agree on: perftest's tests and their order, the Result of a run, the
// tables perftest's ib_* programs print (rperf prints the same, the
// harness reads both), and the RESULT line of the rpma benchmark peers
// (rperf rpma and test/rpmabench/testdata/peer.c).
//
// It holds no measuring code: the loops stay in cmd/rperf's main package,
// so that a profile tells the tool's own code from the libraries'.
package perftest

// Test is one of perftest's tests.
type Test struct {
	Name  string // write_lat, ...: the C program is ib_<Name>
	Lat   bool   // a latency test; else bandwidth
	Title string // perftest's banner
}

// Tests are the tests rperf runs. The order is part of rperf's address
// exchange, which names the test by its index: append only.
var Tests = []Test{
	{"write_lat", true, "RDMA_Write Latency Test"},
	{"read_lat", true, "RDMA_Read Latency Test"},
	{"send_lat", true, "Send Latency Test"},
	{"atomic_lat", true, "Atomic FETCH_AND_ADD Latency Test"},
	{"write_bw", false, "RDMA_Write BW Test"},
	{"read_bw", false, "RDMA_Read BW Test"},
	{"send_bw", false, "Send BW Test"},
}

// Find returns the index in Tests of the test called name.
func Find(name string) (int, bool) {
	for i, t := range Tests {
		if t.Name == name {
			return i, true
		}
	}
	return 0, false
}

// MaxAllSize is the largest message size, that of -a: perftest's MAX_SIZE.
const MaxAllSize = 1 << 23

// MiB is perftest's MB: bandwidth is reported in units of 2^20 bytes per
// second.
const MiB = 0x100000
