//go:build linux && !purerdma_stub

package rdmanl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/netlink"
)

// encoded is e's bytes for seeds and round trips.
func encoded(tb testing.TB, e *netlink.AttributeEncoder) []byte {
	tb.Helper()
	b, err := e.Encode()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// roundTrip checks decode(encode(v)) == v for a v that parse decoded from
// a kernel reply, so that a reply decodes to what the kernel meant and
// nothing of it is invented.
func roundTrip[T any](t *testing.T, parse func([]byte) (T, error), encode func(T) *netlink.AttributeEncoder, b []byte, norm func(T) T) {
	t.Helper()
	v, err := parse(b)
	if err != nil {
		return
	}
	if norm != nil {
		v = norm(v)
	}
	again, err := parse(encoded(t, encode(v)))
	if err != nil {
		t.Fatalf("%+v re-encoded does not decode: %v", v, err)
	}
	if diff := cmp.Diff(v, again); diff != "" {
		t.Fatalf("decode(encode(v)) (-v +again):\n%s", diff)
	}
}

// FuzzParseDevice decodes arbitrary bytes as an RDMA_NLDEV_CMD_GET reply.
func FuzzParseDevice(f *testing.F) {
	f.Add(encoded(f, encodeDevice(rxe0)))
	f.Add(encoded(f, encodeDevice(siw0)))
	f.Add([]byte{5, 0, abi.RDMA_NLDEV_ATTR_DEV_INDEX, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip(t, parseDevice, encodeDevice, b, nil)
	})
}

// FuzzParsePort decodes arbitrary bytes as an RDMA_NLDEV_CMD_PORT_GET
// reply and prints the port as `rdma link show` does, whatever its state
// numbers. The test's encoder, like the kernel, sends a netdev's index
// only with its name.
func FuzzParsePort(f *testing.F) {
	f.Add(encoded(f, encodePort(rxe0Port)))
	f.Add(encoded(f, encodePort(Port{DevName: "mlx5_0", Port: 2, State: 1})))
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip(t, parsePort, encodePort, b, func(p Port) Port {
			if p.NetdevName == "" {
				p.NetdevIndex = 0
			}
			return p
		})
		if p, err := parsePort(b); err == nil {
			s := p.String()
			if !strings.HasPrefix(s, fmt.Sprintf("link %s/%d state ", p.DevName, p.Port)) ||
				strings.HasSuffix(s, " netdev "+p.NetdevName) != (p.NetdevName != "") {
				t.Fatalf("%+v prints as %q", p, s)
			}
		}
	})
}

// encodeChardev lays a Chardev out as nldev_get_chardev does, the dev_t
// as huge_encode_dev and the driver ID as the u32 the kernel puts.
func encodeChardev(cd Chardev) *netlink.AttributeEncoder {
	e := netlink.NewAttributeEncoder()
	e.Uint64(abi.RDMA_NLDEV_ATTR_CHARDEV, uint64(cd.Minor&0xff|cd.Major<<8|(cd.Minor&^0xff)<<12))
	e.Uint64(abi.RDMA_NLDEV_ATTR_CHARDEV_ABI, cd.ABI)
	e.String(abi.RDMA_NLDEV_ATTR_CHARDEV_NAME, cd.Name)
	e.Uint32(abi.RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, cd.DriverID)
	return e
}

// FuzzParseChardev decodes arbitrary bytes as an
// RDMA_NLDEV_CMD_GET_CHARDEV reply. A dev_t carries 12 bits of major and
// 20 of minor, which is all that can come back.
func FuzzParseChardev(f *testing.F) {
	f.Add(encoded(f, encodeChardev(Chardev{Name: "uverbs0", ABI: 1, Major: 231, Minor: 192, DriverID: abi.RDMA_DRIVER_RXE})))
	e := encodeChardev(Chardev{Name: "uverbs1", ABI: 1, Major: 231, Minor: 193})
	e.Uint64(abi.RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, abi.RDMA_DRIVER_SIW) // as the uapi header documents it
	f.Add(encoded(f, e))
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip(t, parseChardev, encodeChardev, b, nil)
		if cd, err := parseChardev(b); err == nil && (cd.Major >= 1<<12 || cd.Minor >= 1<<20) {
			t.Fatalf("dev_t decoded as %d:%d", cd.Major, cd.Minor)
		}
	})
}

// FuzzParseResourceSummary decodes arbitrary bytes as an
// RDMA_NLDEV_CMD_RES_GET reply, nested tables and all.
func FuzzParseResourceSummary(f *testing.F) {
	for _, enc := range []resEncoding{{}, {nestedFlag: true, pad: true, extra: true}} {
		f.Add(encoded(f, encodeResourceSummary(rxe0Res, enc)))
	}
	f.Add(encoded(f, encodeResourceSummary(ResourceSummary{DevName: "siw0"}, resEncoding{})))
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip(t, parseResourceSummary, func(s ResourceSummary) *netlink.AttributeEncoder {
			return encodeResourceSummary(s, resEncoding{})
		}, b, nil)
	})
}
