package rpma

import "time"

// ConnConfig configures a connection (rpma_conn_cfg). Its zero value,
// and any field left 0, means librpma's default for that field
// (rpma_conn_cfg_new), so a literal names only what it changes:
// ConnConfig{RCQSize: 4} is the defaults with a receive CQ of 4 entries.
// A nil *ConnConfig means the defaults too, as a NULL cfg does in
// librpma. Unlike librpma, a size or timeout of 0 cannot be asked for; a
// negative one is ErrInvalid when the config is used.
type ConnConfig struct {
	// Timeout bounds address and route resolution, and how long
	// Conn.Disconnect waits for posted operations to leave the send
	// queue. 0 means DefaultTimeout (1 s).
	Timeout time.Duration
	// CQSize is the number of entries of the main CQ. 0 means
	// DefaultQueueSize (10).
	CQSize int
	// RCQSize, when not 0, gives receives a CQ of their own with that
	// many entries. 0 means no receive CQ (librpma's default): receives
	// complete on the main CQ.
	RCQSize int
	// SQSize is the number of send queue entries. 0 means
	// DefaultQueueSize (10).
	SQSize int
	// RQSize is the number of receive queue entries. 0 means
	// DefaultQueueSize (10).
	RQSize int
	// SharedCompChannel makes the CQ and receive CQ share one completion
	// channel: wait with Conn.Wait instead of CQ.Wait. false (the
	// default) gives each CQ its own.
	SharedCompChannel bool
	// SRQ, when set, supplies the connection's receives. nil (the
	// default) means the connection's own receive queue.
	SRQ *SRQ
}

// librpma's defaults (RPMA_DEFAULT_TIMEOUT_MS, RPMA_DEFAULT_Q_SIZE).
const (
	DefaultTimeout   = time.Second
	DefaultQueueSize = 10
)

// DefaultConnConfig returns librpma's defaults (rpma_conn_cfg_new):
// timeout 1 s, CQ, SQ and RQ of 10 entries, no receive CQ, no shared
// channel, no SRQ. The zero ConnConfig means the same; this spells the
// values out.
func DefaultConnConfig() ConnConfig {
	return ConnConfig{Timeout: DefaultTimeout, CQSize: DefaultQueueSize, SQSize: DefaultQueueSize, RQSize: DefaultQueueSize}
}

// orDefault validates c and returns a copy of it with every field left 0
// set to its default; nil gives DefaultConnConfig. It is the one place
// the defaults are applied: NewConnRequest and the Endpoint's
// NextConnRequest and TryNextConnRequest all go through it, and keep the
// copy, so a caller's later change to its ConnConfig does not reach an
// existing request.
func (c *ConnConfig) orDefault() (*ConnConfig, error) {
	if c == nil {
		d := DefaultConnConfig()
		return &d, nil
	}
	if c.Timeout < 0 || c.CQSize < 0 || c.RCQSize < 0 || c.SQSize < 0 || c.RQSize < 0 {
		return nil, inval("negative connection config %+v", *c)
	}
	d := *c
	if d.Timeout == 0 {
		d.Timeout = DefaultTimeout
	}
	for _, n := range []*int{&d.CQSize, &d.SQSize, &d.RQSize} {
		if *n == 0 {
			*n = DefaultQueueSize
		}
	}
	return &d, nil
}

// SRQConfig configures a shared receive queue (rpma_srq_cfg). A nil
// *SRQConfig means DefaultSRQConfig; in a SRQConfig, RQSize 0 means
// DefaultSRQSize and RCQSize 0 means no receive CQ of the SRQ's own (its
// completions then go to each connection's CQs), as in ConnConfig, so the
// zero value is a working configuration.
type SRQConfig struct {
	RQSize  int // entries (0: DefaultSRQSize)
	RCQSize int // entries of its receive CQ; 0 for none (DefaultSRQConfig has DefaultSRQSize)
}

// orDefault validates c and returns what NewSRQ makes of it: nil is
// DefaultSRQConfig, RQSize 0 is DefaultSRQSize.
func (c *SRQConfig) orDefault() (SRQConfig, error) {
	if c == nil {
		return DefaultSRQConfig(), nil
	}
	if c.RQSize < 0 || c.RCQSize < 0 {
		return SRQConfig{}, inval("negative SRQ config %+v", *c)
	}
	d := *c
	if d.RQSize == 0 {
		d.RQSize = DefaultSRQSize
	}
	return d, nil
}

// DefaultSRQSize is RPMA_DEFAULT_SRQ_SIZE, what librpma's code uses (its
// man page says 100).
const DefaultSRQSize = 20

// DefaultSRQConfig returns librpma's defaults (rpma_srq_cfg_new): a
// queue of DefaultSRQSize entries with a receive CQ of as many.
func DefaultSRQConfig() SRQConfig { return SRQConfig{RQSize: DefaultSRQSize, RCQSize: DefaultSRQSize} }
