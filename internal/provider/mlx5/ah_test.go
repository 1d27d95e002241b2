package mlx5

import (
	"bytes"
	"errors"
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
)

var dgid = [16]byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}

// TestNewAH: the address vectors of an InfiniBand and a RoCE AH, as
// mlx5_create_ah builds them.
func TestNewAH(t *testing.T) {
	c := openCtx(t, newFakeDev(t), ucontextResp(true))
	for _, tc := range []struct {
		name string
		attr provider.AHAttr
		resp string
		want string
	}{
		{
			name: "InfiniBand, global",
			attr: provider.AHAttr{DGID: dgid, FlowLabel: 0x12345, SGIDIndex: 2, HopLimit: 64, TrafficClass: 0x10,
				DLID: 0x1234, SL: 5, SrcPathBits: 0x81, StaticRate: 3, IsGlobal: true, PortNum: 1},
			want: "00 00 00 00 00 00 00 00 00 00 00 00 85 01 12 34" +
				" 00 00 00 00 00 00 00 00 00 00 10 40 40 21 23 45" +
				" fe 80 00 00 00 00 00 00 01 02 03 04 05 06 07 08",
		},
		{
			name: "InfiniBand, local",
			attr: provider.AHAttr{DLID: 7, SL: 0x1f, StaticRate: 30, PortNum: 1},
			want: "00 00 00 00 00 00 00 00 00 00 00 00 0f 00 00 07" +
				" 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00" +
				" 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		},
		{
			// The UDP source port from the flow label, the MAC from
			// CREATE_AH's response, no GRH bit.
			name: "RoCE",
			attr: provider.AHAttr{DGID: dgid, FlowLabel: 0x12345, SGIDIndex: 3, HopLimit: 1, SL: 5, StaticRate: 7, IsGlobal: true, PortNum: 1, Ethernet: true},
			resp: "10 00 00 00 02 11 22 33 44 55 00 00 00 00 00 00",
			want: "00 00 00 00 00 00 00 00 00 00 00 00 ca 00 e3 41" +
				" 00 00 00 00 02 11 22 33 44 55 00 01 00 31 23 45" +
				" fe 80 00 00 00 00 00 00 01 02 03 04 05 06 07 08",
		},
	} {
		ah, err := c.NewAH(&tc.attr, hexBytes(tc.resp))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if want := hexBytes(tc.want); !bytes.Equal(ah.AV[:], want) {
			t.Errorf("%s: AV\n% x\nwant\n% x", tc.name, ah.AV[:], want)
		}
	}
	// Without a flow label the port is random, in the RoCE v2 range.
	for i := 0; i < 100; i++ {
		if p := udpSport(0); p < 0xc000 {
			t.Fatalf("source port %#x", p)
		}
	}
	for _, bad := range []provider.AHAttr{{PortNum: 0}, {PortNum: 2}, {PortNum: 1, Ethernet: true}} {
		if _, err := c.NewAH(&bad, nil); !errors.Is(err, provider.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	r := ucontextResp(true)
	r.CmdsSuppUHW = 0
	old := openCtx(t, newFakeDev(t), r)
	if _, err := old.NewAH(&provider.AHAttr{PortNum: 1, Ethernet: true, IsGlobal: true}, nil); !errors.Is(err, provider.ErrUnsupported) {
		t.Errorf("RoCE AH without CREATE_AH's MAC: %v", err)
	}
}
