package rdmacm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
)

// structBytes is v as the kernel lays it out.
func structBytes(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.NativeEndian, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fromBytes reads b, padded with zeros to T's size, as a T: the
// reference decoding, through encoding/binary rather than the package's
// own view of the memory.
func fromBytes[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	n := binary.Size(v)
	if len(b) < n {
		b = append(bytes.Clone(b), make([]byte, n-len(b))...)
	}
	if err := binary.Read(bytes.NewReader(b[:n]), binary.NativeEndian, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzEventResp decodes arbitrary bytes as the kernel's event response,
// in both port spaces, the way EventChannel.decode does for an event of a
// known ID. The private data is the declared number of bytes of the
// param union, every other field is where the kernel put it, and the
// event's error agrees with its status.
func FuzzEventResp(f *testing.F) {
	req := abi.UcmEventResp{UID: 1, ID: 2, Event: abi.RDMA_CM_EVENT_CONNECT_REQUEST}
	p := (&ID{}).connParam(&ConnParam{PrivateData: []byte("hello"), QPNum: 0x11}, rdLimits{resp: 1, init: 1}, 7, 7)
	copy(req.Param[:], structBytes(f, p))
	f.Add(structBytes(f, req), false)
	rej := abi.UcmEventResp{Event: abi.RDMA_CM_EVENT_REJECTED, Status: 28}
	rej.Param[abi.RDMA_MAX_PRIVATE_DATA+8] = 255 // private_data_len
	f.Add(structBytes(f, rej), false)
	ud := abi.UcmEventResp{Event: abi.RDMA_CM_EVENT_ESTABLISHED}
	copy(ud.Param[:], structBytes(f, abi.UcmUDParam{QPNum: 5, QKey: 0x11111111, AHAttr: abi.AHAttr{DLID: 3, IsGlobal: 1, PortNum: 1}, PrivateDataLen: 4, PrivateData: [256]uint8{1, 2, 3, 4}}))
	f.Add(structBytes(f, ud), true)
	timedOut := -int32(syscall.ETIMEDOUT)
	f.Add(structBytes(f, abi.UcmEventResp{Event: abi.RDMA_CM_EVENT_ADDR_ERROR, Status: uint32(timedOut)}), false)
	f.Add([]byte{}, true)

	f.Fuzz(func(t *testing.T, b []byte, udp bool) {
		r := fromBytes[abi.UcmEventResp](t, b)
		ps := TCP
		if udp {
			ps = UDP
		}
		e := &Event{Type: EventType(r.Event), Status: int(int32(r.Status))}
		e.Param = decodeParam(ps, r.Param[:])

		var want ConnParam
		var private []byte
		if udp {
			k := fromBytes[abi.UcmUDParam](t, r.Param[:])
			private = k.PrivateData[:k.PrivateDataLen]
			want = ConnParam{QPNum: k.QPNum, QKey: k.QKey, AH: ahAttr(&k.AHAttr)}
		} else {
			k := fromBytes[abi.UcmConnParam](t, r.Param[:])
			private = k.PrivateData[:k.PrivateDataLen]
			want = ConnParam{QPNum: k.QPNum, ResponderResources: k.ResponderResources, InitiatorDepth: k.InitiatorDepth,
				FlowControl: k.FlowControl, RetryCount: k.RetryCount, RNRRetryCount: k.RNRRetryCount, SRQ: k.SRQ != 0}
		}
		if len(private) > 0 {
			want.PrivateData = private
		}
		if !reflect.DeepEqual(want, e.Param) {
			t.Fatalf("param (-want +got):\n%s", cmp.Diff(want, e.Param))
		}
		if len(e.Param.PrivateData) > 0 && &e.Param.PrivateData[0] == &r.Param[0] {
			t.Fatal("the private data aliases the response")
		}

		_ = e.String()
		err := e.Err()
		switch {
		case e.Status == 0:
			if err != nil {
				t.Fatalf("status 0: Err() = %v", err)
			}
		case e.Type == EventRejected:
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("rejected, status %d: Err() = %v", e.Status, err)
			}
		case e.Status < 0:
			if !errors.Is(err, syscall.Errno(-e.Status)) {
				t.Fatalf("status %d: Err() = %v", e.Status, err)
			}
		default:
			if err == nil {
				t.Fatalf("status %d: no error", e.Status)
			}
		}
	})
}

// FuzzConnParamRoundTrip checks that what Connect and Accept send is
// what the peer's event decodes: decode(encode(p)) == p, for up to the
// 255 bytes of private data that private_data_len can count.
func FuzzConnParamRoundTrip(f *testing.F) {
	f.Add([]byte("librpma"), uint8(16), uint8(16), uint8(1), uint8(7), uint8(7), true, uint32(0x123456))
	f.Add([]byte{}, uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), false, uint32(0))
	f.Add(bytes.Repeat([]byte{0xa5}, abi.CMA_MAX_PRIVATE_DATA_REP), uint8(255), uint8(255), uint8(255), uint8(255), uint8(255), false, ^uint32(0))
	f.Fuzz(func(t *testing.T, private []byte, rr, depth, fc, retry, rnr uint8, srq bool, qpn uint32) {
		if len(private) > 255 {
			private = private[:255]
		}
		p := ConnParam{PrivateData: private, ResponderResources: rr, InitiatorDepth: depth, FlowControl: fc,
			RetryCount: retry, RNRRetryCount: rnr, SRQ: srq, QPNum: qpn}
		if len(private) == 0 {
			p.PrivateData = nil
		}
		k := (&ID{}).connParam(&p, rdLimits{resp: rr, init: depth}, retry, rnr)
		if k.Valid == 0 {
			t.Fatal("connParam left valid 0")
		}
		got := decodeParam(TCP, structBytes(t, k))
		if !reflect.DeepEqual(p, got) {
			t.Fatalf("decode(encode(p)) (-p +got):\n%s", cmp.Diff(p, got))
		}
	})
}

// FuzzSockaddr decodes the addresses of RDMA_USER_CM_QUERY_ADDR: a
// sockaddr_storage and the size the kernel says it used. An address that
// decodes encodes to the same family, port and address (an IPv4-mapped
// IPv6 address encodes as IPv4 and decodes to its IPv4 form), and a size
// beyond the storage is an error.
func FuzzSockaddr(f *testing.F) {
	var b [128]byte
	f.Add(b[:encodeSockaddr(b[:], netip.MustParseAddrPort("192.168.77.1:7204"))], uint16(16))
	f.Add(b[:encodeSockaddr(b[:], netip.MustParseAddrPort("[fe80::5054:ff:fe12:3456]:1"))], uint16(28))
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{27, 0}, uint16(2))
	f.Add([]byte{2, 0, 0, 1}, uint16(200))
	f.Fuzz(func(t *testing.T, in []byte, n uint16) {
		var s [128]byte
		copy(s[:], in)
		ap, err := storedSockaddr(&s, n)
		if err != nil {
			return
		}
		if int(n) > len(s) {
			t.Fatalf("size %d beyond the storage decoded as %v", n, ap)
		}
		if !ap.IsValid() {
			if n >= 2 && binary.NativeEndian.Uint16(s[:]) != 0 {
				t.Fatalf("family %d decoded as no address", binary.NativeEndian.Uint16(s[:]))
			}
			return
		}
		var out [128]byte
		m := encodeSockaddr(out[:], ap)
		if ap.Addr().Is4In6() {
			back, err := decodeSockaddr(out[:m])
			if want := netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()); err != nil || back != want {
				t.Fatalf("%v re-decodes as %v, %v; want %v", ap, back, err, want)
			}
			return
		}
		if m > int(n) {
			t.Fatalf("%v decoded from %d bytes encodes to %d", ap, n, m)
		}
		// The family, port and address: sin_zero, sin6_flowinfo and
		// sin6_scope_id are not kept.
		kept := [][2]int{{0, 8}}
		if m == sizeofSockaddrInet6 {
			kept = [][2]int{{0, 4}, {8, 24}}
		}
		for _, r := range kept {
			if !bytes.Equal(out[r[0]:r[1]], s[r[0]:r[1]]) {
				t.Fatalf("%v: decoded from % x, encodes to % x", ap, s[:m], out[:m])
			}
		}
	})
}
