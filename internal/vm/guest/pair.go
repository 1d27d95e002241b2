package guest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// wire sets up this guest's side of the pair command's wire: the NIC's
// address, and an rxe link on it. The guest learns who it is from its
// MAC address, and tells the steps through PURERDMA_PAIR_* variables.
func wire(p *plan.Plan) (string, error) {
	w := p.Wire
	mac, err := waitNIC(w.Netdev)
	if err != nil {
		return "", err
	}
	var me, peer *plan.WireGuest
	for i := range w.Guests {
		if strings.EqualFold(w.Guests[i].MAC, mac) {
			me = &w.Guests[i]
		} else {
			peer = &w.Guests[i]
		}
	}
	if me == nil || peer == nil {
		return "", fmt.Errorf("%s has MAC %s, which the plan's wire does not name", w.Netdev, mac)
	}
	prefix, err := netip.ParsePrefix(me.Prefix)
	if err != nil {
		return "", err
	}
	c, err := rtnl.Dial()
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetUp(w.Netdev); err != nil {
		return "", err
	}
	if err := c.AddAddr(w.Netdev, prefix); err != nil {
		return "", err
	}
	nl, err := rdmanl.Dial()
	if err != nil {
		return "", err
	}
	defer nl.Close()
	if err := nl.LinkAdd(w.Device, "rxe", w.Netdev); err != nil {
		return "", fmt.Errorf("rdma link add %s type rxe netdev %s: %w", w.Device, w.Netdev, err)
	}
	if err := waitFor(10*time.Second, func() bool { return uverbsOf(w.Device) != "" }); err != nil {
		return "", fmt.Errorf("%s has no uverbs node: %w", w.Device, err)
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	peerAddr, _, _ := strings.Cut(peer.Prefix, "/")
	for k, v := range map[string]string{
		"PURERDMA_PAIR":           me.Name,
		"PURERDMA_PAIR_ROLE":      me.Role,
		"PURERDMA_PAIR_DEV":       w.Device,
		"PURERDMA_PAIR_NETDEV":    w.Netdev,
		"PURERDMA_PAIR_ADDR":      prefix.Addr().String(),
		"PURERDMA_PAIR_PEER":      peerAddr,
		"PURERDMA_PAIR_PEER_NAME": peer.Name,
		"PURERDMA_PAIR_POWEROFF":  plan.PowerOffPrefix + me.Name,
		"PURERDMA_PAIR_MARK":      plan.MarkPrefix,
	} {
		p.Env[k] = v
	}
	return fmt.Sprintf("guest %s (%s, %s) %s(%s on %s), peer %s at %s", me.Name, me.Role, prefix, w.Device, uverbsOf(w.Device), w.Netdev, peer.Name, peerAddr), nil
}

// waitNIC waits for the NIC, which appears once virtio_net has probed the
// PCI device, and returns its MAC address.
func waitNIC(name string) (string, error) {
	var mac []byte
	err := waitFor(10*time.Second, func() bool {
		var err error
		mac, err = os.ReadFile(filepath.Join("/sys/class/net", name, "address"))
		return err == nil
	})
	if err != nil {
		return "", fmt.Errorf("no %s: %w", name, err)
	}
	return strings.TrimSpace(string(mac)), nil
}

// uverbsOf returns the uverbs node of an RDMA device once user space can
// open it, or "".
func uverbsOf(dev string) string {
	dirs, _ := filepath.Glob("/sys/class/infiniband_verbs/uverbs*")
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "ibdev"))
		if err != nil || strings.TrimSpace(string(b)) != dev {
			continue
		}
		if _, err := os.Stat(filepath.Join("/dev/infiniband", filepath.Base(dir))); err == nil {
			return filepath.Base(dir)
		}
	}
	return ""
}

func waitFor(limit time.Duration, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("still not there after %v", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
