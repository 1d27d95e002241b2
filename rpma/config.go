package rpma

import "time"

// ConnConfig configures a connection (rpma_conn_cfg). Start from
// DefaultConnConfig: as in librpma, a size of 0 means 0 entries, so the
// zero ConnConfig is not the defaults. A nil *ConnConfig means the
// defaults, as a NULL cfg does in librpma.
type ConnConfig struct {
	// Timeout bounds address and route resolution (default 1 s).
	Timeout time.Duration
	CQSize  int // main CQ entries (default 10)
	// RCQSize, when not 0, gives receives a CQ of their own (default 0).
	RCQSize int
	SQSize  int // send queue entries (default 10)
	RQSize  int // receive queue entries (default 10)
	// SharedCompChannel makes the CQ and receive CQ share one completion
	// channel: wait with Conn.Wait instead of CQ.Wait.
	SharedCompChannel bool
	// SRQ, when set, supplies the connection's receives.
	SRQ *SRQ
}

// librpma's defaults (RPMA_DEFAULT_TIMEOUT_MS, RPMA_DEFAULT_Q_SIZE).
const (
	DefaultTimeout   = time.Second
	DefaultQueueSize = 10
)

// DefaultConnConfig returns librpma's defaults (rpma_conn_cfg_new):
// timeout 1 s, CQ, SQ and RQ of 10 entries, no receive CQ, no shared
// channel, no SRQ.
func DefaultConnConfig() ConnConfig {
	return ConnConfig{Timeout: DefaultTimeout, CQSize: DefaultQueueSize, SQSize: DefaultQueueSize, RQSize: DefaultQueueSize}
}

// orDefault returns c, or the defaults for nil, after validating it.
func (c *ConnConfig) orDefault() (*ConnConfig, error) {
	if c == nil {
		d := DefaultConnConfig()
		return &d, nil
	}
	if c.Timeout < 0 || c.CQSize < 0 || c.RCQSize < 0 || c.SQSize < 0 || c.RQSize < 0 {
		return nil, inval("negative connection config %+v", *c)
	}
	return c, nil
}

// SRQConfig configures a shared receive queue (rpma_srq_cfg). Start from
// DefaultSRQConfig; a nil *SRQConfig means the defaults.
type SRQConfig struct {
	RQSize  int // entries (default 20)
	RCQSize int // entries of its receive CQ; 0 for none (default 20)
}

// DefaultSRQSize is RPMA_DEFAULT_SRQ_SIZE, what librpma's code uses (its
// man page says 100).
const DefaultSRQSize = 20

// DefaultSRQConfig returns librpma's defaults (rpma_srq_cfg_new): a
// queue of DefaultSRQSize entries with a receive CQ of as many.
func DefaultSRQConfig() SRQConfig { return SRQConfig{RQSize: DefaultSRQSize, RCQSize: DefaultSRQSize} }
