//go:build linux && !purerdma_stub

package rdmanl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/netlink"
	"github.com/purerdma/purerdma/internal/netlink/nltest"
)

func skipBigEndian(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are little-endian")
	}
}

// kernel is a fake RDMA netlink. It answers the way Linux 6.1's
// drivers/infiniband/core/nldev.c does, attribute for attribute, and
// records the requests it saw.
type kernel struct {
	devs     []Device
	ports    []Port
	chardevs map[uint32]Chardev // by device index
	driverID func(e *netlink.AttributeEncoder, id uint32)
	fail     error  // answer every request with this error
	vanish   string // name of a device that disappears when its ports are asked for
	reqs     []netlink.Message
}

func (k *kernel) dial(t *testing.T) *Conn {
	nl := nltest.Dial(k.answer)
	t.Cleanup(func() { nl.Close() })
	return &Conn{nl: nl}
}

func nldev(cmd uint16) uint16 { return abi.RDMA_NL_GET_TYPE(abi.RDMA_NL_NLDEV, cmd) }

func (k *kernel) answer(req netlink.Message) ([]netlink.Message, error) {
	k.reqs = append(k.reqs, req)
	if k.fail != nil {
		return nil, k.fail
	}
	var out []*netlink.AttributeEncoder
	switch req.Header.Type {
	case nldev(abi.RDMA_NLDEV_CMD_GET):
		for _, d := range k.devs {
			out = append(out, encodeDevice(d))
		}
	case nldev(abi.RDMA_NLDEV_CMD_PORT_GET):
		// The port dump is of one device, and the index is required.
		index, ok := devIndex(req)
		if !ok {
			return nil, unix.EINVAL
		}
		k.devs = slices.DeleteFunc(k.devs, func(d Device) bool { return d.Index == index && d.Name == k.vanish })
		if !slices.ContainsFunc(k.devs, func(d Device) bool { return d.Index == index }) {
			return nil, unix.EINVAL
		}
		for _, p := range k.ports {
			if p.DevIndex == index {
				out = append(out, encodePort(p))
			}
		}
	case nldev(abi.RDMA_NLDEV_CMD_GET_CHARDEV):
		index, _ := devIndex(req)
		cd, ok := k.chardevs[index]
		if !ok {
			return nil, unix.ENOENT
		}
		e := netlink.NewAttributeEncoder()
		e.Uint64(abi.RDMA_NLDEV_ATTR_CHARDEV, uint64(cd.Minor&0xff|cd.Major<<8|(cd.Minor&^0xff)<<12))
		e.Uint64(abi.RDMA_NLDEV_ATTR_CHARDEV_ABI, cd.ABI)
		e.String(abi.RDMA_NLDEV_ATTR_CHARDEV_NAME, cd.Name)
		if cd.DriverID != 0 {
			k.driverID(e, cd.DriverID)
		}
		out = append(out, e)
	case nldev(abi.RDMA_NLDEV_CMD_NEWLINK), nldev(abi.RDMA_NLDEV_CMD_DELLINK):
	default:
		return nil, unix.EOPNOTSUPP
	}
	var msgs []netlink.Message
	for _, e := range out {
		b, err := e.Encode()
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, netlink.Message{Header: unix.NlMsghdr{Type: req.Header.Type}, Data: b})
	}
	return msgs, nil
}

func devIndex(req netlink.Message) (uint32, bool) {
	ad := netlink.NewAttributeDecoder(req.Data)
	for ad.Next() {
		if ad.Type() == abi.RDMA_NLDEV_ATTR_DEV_INDEX {
			return ad.Uint32(), ad.Err() == nil
		}
	}
	return 0, false
}

// encodeDevice follows fill_dev_info, including attributes we do not
// decode and the zero-type padding nla_put_u64_64bit may add.
func encodeDevice(d Device) *netlink.AttributeEncoder {
	e := netlink.NewAttributeEncoder()
	e.Uint32(abi.RDMA_NLDEV_ATTR_DEV_INDEX, d.Index)
	e.String(abi.RDMA_NLDEV_ATTR_DEV_NAME, d.Name)
	e.Uint32(abi.RDMA_NLDEV_ATTR_PORT_INDEX, d.Ports)
	e.Flag(abi.RDMA_NLDEV_ATTR_PAD)
	e.Uint64(abi.RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1234)
	if d.FWVersion != "" {
		e.String(abi.RDMA_NLDEV_ATTR_FW_VERSION, d.FWVersion)
	}
	e.Uint64(abi.RDMA_NLDEV_ATTR_NODE_GUID, d.NodeGUID)
	e.Uint64(abi.RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, d.SysImageGUID)
	e.Uint8(abi.RDMA_NLDEV_ATTR_DEV_NODE_TYPE, d.NodeType)
	e.Uint8(abi.RDMA_NLDEV_ATTR_DEV_DIM, 0)
	if d.Protocol != "" {
		e.String(abi.RDMA_NLDEV_ATTR_DEV_PROTOCOL, d.Protocol)
	}
	return e
}

// encodePort follows fill_port_info for a RoCE or iWARP port.
func encodePort(p Port) *netlink.AttributeEncoder {
	e := netlink.NewAttributeEncoder()
	e.Uint32(abi.RDMA_NLDEV_ATTR_DEV_INDEX, p.DevIndex)
	e.String(abi.RDMA_NLDEV_ATTR_DEV_NAME, p.DevName)
	e.Uint32(abi.RDMA_NLDEV_ATTR_PORT_INDEX, p.Port)
	e.Uint64(abi.RDMA_NLDEV_ATTR_CAP_FLAGS, 0x4000000)
	e.Uint8(abi.RDMA_NLDEV_ATTR_PORT_STATE, p.State)
	e.Uint8(abi.RDMA_NLDEV_ATTR_PORT_PHYS_STATE, p.PhysState)
	if p.NetdevName != "" {
		e.Uint32(abi.RDMA_NLDEV_ATTR_NDEV_INDEX, p.NetdevIndex)
		e.String(abi.RDMA_NLDEV_ATTR_NDEV_NAME, p.NetdevName)
	}
	return e
}

var (
	rxe0 = Device{Index: 0, Name: "rxe0", NodeGUID: 0x505400fffe123456, SysImageGUID: 0x505400fffe123456,
		NodeType: 1, Protocol: "roce", Ports: 1}
	siw0 = Device{Index: 1, Name: "siw0", NodeGUID: 0x525400123457, SysImageGUID: 0x525400123457,
		FWVersion: "0.0.0", NodeType: 4, Protocol: "iw", Ports: 1}
	rxe0Port = Port{DevIndex: 0, DevName: "rxe0", Port: 1, State: 4, PhysState: 5, NetdevName: "veth0", NetdevIndex: 3}
	siw0Port = Port{DevIndex: 1, DevName: "siw0", Port: 1, State: 1, PhysState: 3, NetdevName: "veth2", NetdevIndex: 5}
)

func TestDevices(t *testing.T) {
	k := &kernel{devs: []Device{rxe0, siw0}}
	c := k.dial(t)
	got, err := c.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Device{rxe0, siw0}, got); diff != "" {
		t.Errorf("Devices (-want +got):\n%s", diff)
	}
	wantReq := unix.NlMsghdr{Len: 16, Type: 0x1401, Flags: unix.NLM_F_REQUEST | unix.NLM_F_DUMP, Seq: 1}
	if diff := cmp.Diff(wantReq, k.reqs[0].Header); diff != "" {
		t.Errorf("request header (-want +got):\n%s", diff)
	}
}

func TestDeviceByName(t *testing.T) {
	c := (&kernel{devs: []Device{rxe0, siw0}}).dial(t)
	got, err := c.DeviceByName("siw0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(siw0, got); diff != "" {
		t.Errorf("DeviceByName (-want +got):\n%s", diff)
	}
	if _, err := c.DeviceByName("mlx5_0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeviceByName of a missing device: %v, want ErrNotFound", err)
	}
}

func TestPorts(t *testing.T) {
	skipBigEndian(t)
	mlx := Device{Index: 2, Name: "mlx5_0", Ports: 2}
	mlx1 := Port{DevIndex: 2, DevName: "mlx5_0", Port: 1, State: 1, PhysState: 2}
	mlx2 := Port{DevIndex: 2, DevName: "mlx5_0", Port: 2, State: 4, PhysState: 5}
	k := &kernel{devs: []Device{rxe0, siw0, mlx}, ports: []Port{mlx1, rxe0Port, siw0Port, mlx2}}
	got, err := k.dial(t).Ports()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Port{rxe0Port, siw0Port, mlx1, mlx2}, got); diff != "" {
		t.Errorf("Ports (-want +got):\n%s", diff)
	}
	// Two device dumps that agree (Devices), then a port dump of each
	// device.
	var reqs []string
	for _, r := range k.reqs {
		reqs = append(reqs, fmt.Sprintf("%#x %#x %v", r.Header.Type, r.Header.Flags, r.Data))
	}
	want := []string{
		"0x1401 0x301 []",
		"0x1401 0x301 []",
		"0x1405 0x301 [8 0 1 0 0 0 0 0]",
		"0x1405 0x301 [8 0 1 0 1 0 0 0]",
		"0x1405 0x301 [8 0 1 0 2 0 0 0]",
	}
	if diff := cmp.Diff(want, reqs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestPortsDeviceVanishes deletes a device between the device dump and its
// port dump, as a concurrent `rdma link delete` could.
func TestPortsDeviceVanishes(t *testing.T) {
	k := &kernel{devs: []Device{rxe0, siw0}, ports: []Port{rxe0Port, siw0Port}, vanish: siw0.Name}
	got, err := k.dial(t).Ports()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Port{rxe0Port}, got); diff != "" {
		t.Errorf("Ports (-want +got):\n%s", diff)
	}
}

func TestChardev(t *testing.T) {
	skipBigEndian(t)
	u32 := func(e *netlink.AttributeEncoder, id uint32) { e.Uint32(abi.RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, id) }
	u64 := func(e *netlink.AttributeEncoder, id uint32) {
		e.Uint64(abi.RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, uint64(id))
	}
	uverbs0 := Chardev{Name: "uverbs0", ABI: 1, Major: 231, Minor: 192, DriverID: abi.RDMA_DRIVER_RXE}
	for _, tt := range []struct {
		name     string
		driverID func(e *netlink.AttributeEncoder, id uint32)
		want     Chardev
	}{
		{"driver id as the kernel sends it (u32)", u32, uverbs0},
		{"driver id as the header documents it (u64)", u64, uverbs0},
		{"no driver id", u32, Chardev{Name: "uverbs1", ABI: 6, Major: 231, Minor: 193}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &kernel{chardevs: map[uint32]Chardev{7: tt.want}, driverID: tt.driverID}
			got, err := k.dial(t).Chardev(7, "uverbs")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Chardev (-want +got):\n%s", diff)
			}
			want := []byte{
				8, 0, 1, 0, 7, 0, 0, 0, // RDMA_NLDEV_ATTR_DEV_INDEX
				11, 0, 69, 0, 'u', 'v', 'e', 'r', 'b', 's', 0, 0, // RDMA_NLDEV_ATTR_CHARDEV_TYPE
			}
			if diff := cmp.Diff(want, k.reqs[0].Data); diff != "" {
				t.Errorf("request attributes (-want +got):\n%s", diff)
			}
			if got, want := k.reqs[0].Header.Flags, uint16(unix.NLM_F_REQUEST|unix.NLM_F_ACK); got != want {
				t.Errorf("request flags %#x, want %#x", got, want)
			}
		})
	}
}

func TestChardevMissing(t *testing.T) {
	c := (&kernel{}).dial(t)
	if _, err := c.Chardev(7, "umad"); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("Chardev of a device without one: %v, want ENOENT", err)
	}
}

func TestDecodeDev(t *testing.T) {
	for _, tt := range []struct {
		v            uint64
		major, minor uint32
	}{
		{0, 0, 0},
		{0xe7c0, 231, 192},           // uverbs0
		{0xe7ff, 231, 255},           // last minor in the low byte
		{0x10e700, 231, 256},         // minor bits above 8 go to bit 20
		{0xffffffff, 0xfff, 0xfffff}, // largest 32-bit dev_t
		{0xfff00, 0xfff, 0},          // all major
		{0xfff000ff, 0, 0xfffff},     // all minor
		{0x1_0000_e7c0, 231, 192},    // bits above 32 are not part of it
	} {
		major, minor := decodeDev(tt.v)
		if major != tt.major || minor != tt.minor {
			t.Errorf("decodeDev(%#x) = %d:%d, want %d:%d", tt.v, major, minor, tt.major, tt.minor)
		}
		if tt.v <= 0xffffffff && (major != unix.Major(tt.v) || minor != unix.Minor(tt.v)) {
			t.Errorf("decodeDev(%#x) = %d:%d, but unix.Major/Minor say %d:%d", tt.v, major, minor, unix.Major(tt.v), unix.Minor(tt.v))
		}
	}
}

// TestLinkAddRequest checks the NEWLINK message byte for byte against what
// iproute2's `rdma link add rxe0 type rxe netdev veth0` sends.
func TestLinkAddRequest(t *testing.T) {
	skipBigEndian(t)
	k := &kernel{}
	if err := k.dial(t).LinkAdd("rxe0", "rxe", "veth0"); err != nil {
		t.Fatal(err)
	}
	got, err := k.reqs[0].MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		48, 0, 0, 0, // nlmsg_len
		0x03, 0x14, // nlmsg_type: RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK)
		0x05, 0x00, // nlmsg_flags: NLM_F_REQUEST|NLM_F_ACK
		1, 0, 0, 0, // nlmsg_seq
		0, 0, 0, 0, // nlmsg_pid
		9, 0, 2, 0, 'r', 'x', 'e', '0', 0, 0, 0, 0, // RDMA_NLDEV_ATTR_DEV_NAME
		8, 0, 65, 0, 'r', 'x', 'e', 0, // RDMA_NLDEV_ATTR_LINK_TYPE
		10, 0, 51, 0, 'v', 'e', 't', 'h', '0', 0, 0, 0, // RDMA_NLDEV_ATTR_NDEV_NAME
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NEWLINK request (-want +got):\n%s", diff)
	}
}

func TestLinkAddExists(t *testing.T) {
	k := &kernel{fail: &netlink.Error{Errno: unix.EEXIST, Message: "already configured on veth0"}}
	err := k.dial(t).LinkAdd("rxe1", "rxe", "veth0")
	if !errors.Is(err, unix.EEXIST) || !errors.Is(err, os.ErrExist) {
		t.Fatalf("LinkAdd on a taken netdev: %v, want EEXIST", err)
	}
	t.Log(err)
}

func TestLinkDel(t *testing.T) {
	skipBigEndian(t)
	k := &kernel{devs: []Device{rxe0, siw0}}
	c := k.dial(t)
	if err := c.LinkDel("siw0"); err != nil {
		t.Fatal(err)
	}
	if len(k.reqs) != 3 {
		t.Fatalf("%d requests, want two device dumps and a DELLINK", len(k.reqs))
	}
	del := k.reqs[2]
	if del.Header.Type != 0x1404 || del.Header.Flags != unix.NLM_F_REQUEST|unix.NLM_F_ACK {
		t.Errorf("DELLINK header %+v", del.Header)
	}
	if diff := cmp.Diff([]byte{8, 0, 1, 0, 1, 0, 0, 0}, del.Data); diff != "" {
		t.Errorf("DELLINK attributes (-want +got):\n%s", diff)
	}

	k.reqs = nil
	if err := c.LinkDel("rxe9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LinkDel of a missing device: %v, want ErrNotFound", err)
	}
	if len(k.reqs) != 2 {
		t.Errorf("%d requests for a missing device, want only the two dumps", len(k.reqs))
	}
}

func TestMalformedReplies(t *testing.T) {
	bad := []byte{
		6, 0, 1, 0, 1, 0, 0, 0, // DEV_INDEX of 2 bytes
		6, 0, 72, 0, 1, 0, 0, 0, // CHARDEV of 2 bytes
	}
	good, err := encodeDevice(rxe0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		call func(c *Conn) error
	}{
		{"Devices", func(c *Conn) error { _, err := c.Devices(); return err }},
		{"Ports", func(c *Conn) error { _, err := c.Ports(); return err }},
		{"Chardev", func(c *Conn) error { _, err := c.Chardev(0, "uverbs"); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Devices are well-formed except when Devices is the test.
			nl := nltest.Dial(func(req netlink.Message) ([]netlink.Message, error) {
				data := bad
				if req.Header.Type == nldev(abi.RDMA_NLDEV_CMD_GET) && tt.name != "Devices" {
					data = good
				}
				return []netlink.Message{{Header: unix.NlMsghdr{Type: req.Header.Type}, Data: data}}, nil
			})
			defer nl.Close()
			if err := tt.call(&Conn{nl: nl}); err == nil {
				t.Error("malformed reply accepted")
			} else {
				t.Log(err)
			}
		})
	}
}

func TestPortString(t *testing.T) {
	for _, tt := range []struct {
		p    Port
		want string
	}{
		{rxe0Port, "link rxe0/1 state ACTIVE physical_state LINK_UP netdev veth0"},
		{siw0Port, "link siw0/1 state DOWN physical_state DISABLED netdev veth2"},
		{Port{DevName: "mlx5_0", Port: 2, State: 2, PhysState: 2}, "link mlx5_0/2 state INIT physical_state POLLING"},
		{Port{DevName: "x", Port: 1, State: 5, PhysState: 6}, "link x/1 state ACTIVE_DEFER physical_state LINK_ERROR_RECOVER"},
		{Port{DevName: "x", Port: 1, State: 9, PhysState: 200}, "link x/1 state UNKNOWN physical_state UNKNOWN"},
		{Port{DevName: "x", Port: 1}, "link x/1 state NOP physical_state NOP"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestDevicesAgreed: a dump that skipped a device (one unregistered
// during it) is taken again until two dumps agree.
func TestDevicesAgreed(t *testing.T) {
	devs := func(idx ...uint32) []Device {
		var d []Device
		for _, i := range idx {
			d = append(d, Device{Index: i})
		}
		return d
	}
	for _, c := range []struct {
		name  string
		dumps [][]Device
		want  []uint32
		calls int
	}{
		{"stable", [][]Device{devs(1, 2, 38), devs(1, 2, 38)}, []uint32{1, 2, 38}, 2},
		{"skipped one", [][]Device{devs(1, 2), devs(1, 2, 38), devs(1, 2, 38)}, []uint32{1, 2, 38}, 3},
		{"never agrees", [][]Device{devs(1), devs(1, 2), devs(1, 2, 3), devs(1, 2, 3, 4)}, []uint32{1, 2, 3, 4}, 4},
	} {
		calls := 0
		got, err := agreed(func() ([]Device, error) {
			calls++
			return c.dumps[calls-1], nil
		})
		var idx []uint32
		for _, d := range got {
			idx = append(idx, d.Index)
		}
		if err != nil || !slices.Equal(idx, c.want) || calls != c.calls {
			t.Errorf("%s: %v after %d dumps (%v), want %v after %d", c.name, idx, calls, err, c.want, c.calls)
		}
	}
	if _, err := agreed(func() ([]Device, error) { return nil, os.ErrInvalid }); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("a failed dump: %v", err)
	}
}
