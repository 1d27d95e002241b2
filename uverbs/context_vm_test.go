package uverbs

import (
	"errors"
	"github.com/purerdma/purerdma/internal/abi"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
)

func openTest(t *testing.T, d testenv.Dev) *Context {
	t.Helper()
	c, err := OpenName(d.Name)
	if err != nil {
		t.Fatalf("OpenName(%s): %v", d.Name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func fdCount(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

func TestContextOpenClose(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		before := fdCount(t)
		c := openTest(t, d)
		if !c.core.FD.Ioctl() {
			t.Errorf("the kernel has INVOKE_WRITE on 6.1, but Open chose the write() path")
		}
		if got := fdCount(t); got != before+2 {
			t.Errorf("open context holds %d fds, want 2 (command and async)", got-before)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := c.QueryDevice(); !errors.Is(err, ErrClosed) {
			t.Errorf("QueryDevice after Close: %v, want ErrClosed", err)
		}
		if got := fdCount(t); got != before {
			t.Errorf("%d fds leaked", got-before)
		}
	})
}

// TestQueryBothPaths checks that the write() and ioctl paths give the same
// answers, and that the answers fit the device.
func TestQueryBothPaths(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c := openTest(t, d)
		type result struct {
			Dev  DeviceAttr
			Port PortAttr
		}
		var results []result
		for _, ioctl := range []bool{false, true} {
			c.core.FD.UseIoctl(ioctl)
			attr, err := c.QueryDevice()
			if err != nil {
				t.Fatalf("QueryDevice (ioctl %v): %v", ioctl, err)
			}
			port, err := c.QueryPort(1)
			if err != nil {
				t.Fatalf("QueryPort (ioctl %v): %v", ioctl, err)
			}
			results = append(results, result{attr, port})
		}
		if diff := cmp.Diff(results[0], results[1]); diff != "" {
			t.Errorf("write() and ioctl answers differ (-write +ioctl):\n%s", diff)
		}
		// QueryPort takes the ioctl method whenever the kernel has it;
		// its write() fallback must give the same port, less the second
		// capability word only the ioctl carries.
		var ex abi.QueryPortRespEx
		if err := c.queryPortWrite(1, &ex.LegacyResp); err != nil {
			t.Fatalf("query port write(): %v", err)
		}
		want := results[1].Port
		want.PortCapFlags2 = 0
		if diff := cmp.Diff(want, portAttr(&ex)); diff != "" {
			t.Errorf("write() port query differs from the ioctl one (-ioctl +write):\n%s", diff)
		}
		attr, port := results[0].Dev, results[0].Port
		if attr.NodeGUID != c.Device().NodeGUID {
			t.Errorf("QueryDevice node GUID %v, device lists %v", attr.NodeGUID, c.Device().NodeGUID)
		}
		if attr.PhysPortCnt != 1 || attr.MaxQP == 0 || attr.MaxCQE == 0 || attr.MaxQPWR == 0 {
			t.Errorf("implausible device attributes: %+v", attr)
		}
		if port.State != PortActive || port.LinkLayer != LinkLayerEthernet || port.ActiveMTU.Bytes() == 0 || port.GIDTblLen == 0 {
			t.Errorf("port 1: %+v; want an active Ethernet port with an MTU and GIDs", port)
		}
		t.Logf("%s: fw %s, max_qp %d, max_qp_wr %d, max_cqe %d, max_sge %d, atomic %d; port 1 %v, MTU %d/%d, %d GIDs",
			d.Name, attr.FWVer, attr.MaxQP, attr.MaxQPWR, attr.MaxCQE, attr.MaxSGE, attr.AtomicCap,
			port.State, port.ActiveMTU.Bytes(), port.MaxMTU.Bytes(), port.GIDTblLen)
	})
}

func TestQueryPortBad(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		c := openTest(t, d)
		for _, port := range []uint8{0, 2, 255} {
			if _, err := c.QueryPort(port); err == nil {
				t.Errorf("QueryPort(%d) succeeded on a one-port device", port)
			}
		}
	})
}
