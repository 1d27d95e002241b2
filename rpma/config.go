package rpma

import "time"

// ConnConfig configures a connection (rpma_conn_cfg). A nil *ConnConfig
// means the defaults, as a NULL cfg does in librpma.
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

// NewConnConfig returns a config with librpma's defaults
// (rpma_conn_cfg_new).
func NewConnConfig() *ConnConfig {
	return &ConnConfig{Timeout: DefaultTimeout, CQSize: DefaultQueueSize, SQSize: DefaultQueueSize, RQSize: DefaultQueueSize}
}

// orDefault returns c, or the defaults for nil, after validating it.
func (c *ConnConfig) orDefault() (*ConnConfig, error) {
	if c == nil {
		return NewConnConfig(), nil
	}
	if c.Timeout < 0 || c.CQSize < 0 || c.RCQSize < 0 || c.SQSize < 0 || c.RQSize < 0 {
		return nil, inval("negative connection config %+v", *c)
	}
	return c, nil
}

// SRQConfig configures a shared receive queue (rpma_srq_cfg).
type SRQConfig struct {
	RQSize  int // entries (default 20)
	RCQSize int // entries of its receive CQ; 0 for none (default 20)
}

// DefaultSRQSize is RPMA_DEFAULT_SRQ_SIZE, what librpma's code uses (its
// man page says 100).
const DefaultSRQSize = 20

// NewSRQConfig returns an SRQ config with librpma's defaults.
func NewSRQConfig() *SRQConfig { return &SRQConfig{RQSize: DefaultSRQSize, RCQSize: DefaultSRQSize} }
