package guest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/purerdma/purerdma/internal/rdmanl"
	"github.com/purerdma/purerdma/internal/rtnl"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// network brings up lo and one veth pair per RDMA device, with the
// device's address on the first end.
func network(p *plan.Plan) error {
	c, err := rtnl.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetUp("lo"); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	for _, d := range p.GuestDevices(runtime.GOARCH) {
		prefix, err := netip.ParsePrefix(d.Prefix)
		if err != nil {
			return err
		}
		if err := c.AddVeth(d.Netdev, d.Peer); err != nil {
			return fmt.Errorf("veth %s: %w", d.Netdev, err)
		}
		for _, name := range []string{d.Netdev, d.Peer} {
			if err := c.SetUp(name); err != nil {
				return fmt.Errorf("%s up: %w", name, err)
			}
		}
		if err := c.AddAddr(d.Netdev, prefix); err != nil {
			return fmt.Errorf("address %s: %w", d.Netdev, err)
		}
	}
	return nil
}

// rdmaLinks creates the RDMA devices and waits until user space can open
// them: their uverbs nodes and rdma_cm appear asynchronously.
func rdmaLinks(p *plan.Plan) (string, error) {
	c, err := rdmanl.Dial()
	if err != nil {
		return "", err
	}
	defer c.Close()
	for _, d := range p.GuestDevices(runtime.GOARCH) {
		if err := c.LinkAdd(d.Name, d.Type, d.Netdev); err != nil {
			return "", fmt.Errorf("rdma link add %s type %s netdev %s: %w", d.Name, d.Type, d.Netdev, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		summary, missing := devices(p)
		if missing == "" {
			return summary, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("still missing after 10s: %s", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// devices describes the RDMA devices and names what is not there yet.
func devices(p *plan.Plan) (summary, missing string) {
	nodes := map[string]string{} // ibdev -> uverbsN
	dirs, _ := filepath.Glob("/sys/class/infiniband_verbs/uverbs*")
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, "ibdev")); err == nil {
			nodes[strings.TrimSpace(string(b))] = filepath.Base(dir)
		}
	}
	var have, lack []string
	for _, d := range p.GuestDevices(runtime.GOARCH) {
		node := filepath.Join("/dev/infiniband", nodes[d.Name])
		if _, err := os.Stat(node); nodes[d.Name] == "" || err != nil {
			lack = append(lack, d.Name)
			continue
		}
		have = append(have, fmt.Sprintf("%s(%s on %s)", d.Name, nodes[d.Name], d.Netdev))
	}
	if _, err := os.Stat("/dev/infiniband/rdma_cm"); err != nil {
		lack = append(lack, "rdma_cm")
	} else {
		have = append(have, "rdma_cm")
	}
	return strings.Join(have, " "), strings.Join(lack, " ")
}
