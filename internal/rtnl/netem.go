//go:build linux

package rtnl

import (
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/netlink"
)

// Netem is what `tc qdisc replace dev X root netem` sets: the emulated
// network's faults on the link's egress.
type Netem struct {
	Delay time.Duration // added to every packet
	Loss  float64       // percent of packets dropped at random, 0 to 100
	Limit uint32        // packets queued at most; 0 means tc's default, 1000
}

// tcHRoot is TC_H_ROOT: the qdisc is the link's root.
const tcHRoot = 0xFFFFFFFF

// psched ticks are 64 ns (PSCHED_SHIFT 6); struct tc_netem_qopt's latency
// is in ticks.
const pschedShift = 6

// SetNetem makes a netem qdisc the link's root qdisc, replacing whatever
// was there (sch_netem must be loaded or loadable).
func (c *Conn) SetNetem(name string, n Netem) error {
	if n.Loss < 0 || n.Loss > 100 || n.Delay < 0 || n.Delay>>pschedShift > time.Duration(^uint32(0)) {
		return fmt.Errorf("rtnl: netem on %s: %+v out of range: %w", name, n, unix.EINVAL)
	}
	index, err := c.index(name)
	if err != nil {
		return fmt.Errorf("rtnl: netem on %s: %w", name, err)
	}
	if n.Limit == 0 {
		n.Limit = 1000
	}
	// struct tc_netem_qopt: latency, limit, loss, gap, duplicate, jitter.
	// Loss is a probability scaled to the whole u32 range, as tc sends it.
	opt := make([]byte, 24)
	binary.NativeEndian.PutUint32(opt[0:], uint32(n.Delay.Nanoseconds()>>pschedShift))
	binary.NativeEndian.PutUint32(opt[4:], n.Limit)
	binary.NativeEndian.PutUint32(opt[8:], uint32(n.Loss/100*float64(^uint32(0))))
	e := netlink.NewAttributeEncoder()
	e.String(unix.TCA_KIND, "netem")
	e.Bytes(unix.TCA_OPTIONS, opt)
	if _, err := c.request(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_REPLACE, tcmsg(index, tcHRoot), e); err != nil {
		return fmt.Errorf("rtnl: netem on %s: %w", name, err)
	}
	return nil
}

// DelRootQdisc removes the link's root qdisc, so that the default one
// takes over again.
func (c *Conn) DelRootQdisc(name string) error {
	index, err := c.index(name)
	if err != nil {
		return fmt.Errorf("rtnl: delete root qdisc of %s: %w", name, err)
	}
	if _, err := c.request(unix.RTM_DELQDISC, 0, tcmsg(index, tcHRoot), netlink.NewAttributeEncoder()); err != nil {
		return fmt.Errorf("rtnl: delete root qdisc of %s: %w", name, err)
	}
	return nil
}

// tcmsg encodes struct tcmsg: family, padding, ifindex, handle (0: the
// kernel picks one), parent, info.
func tcmsg(index, parent uint32) []byte {
	b := make([]byte, 20)
	binary.NativeEndian.PutUint32(b[4:], index)
	binary.NativeEndian.PutUint32(b[12:], parent)
	return b
}
