// Layout and constant tests for ib_user_sa.h. The expected numbers in the
// tables were printed by the C compiler from the Linux 6.1 headers; do not
// compute them by hand. abi_test.go says how, and why they hold on arm64.

package abi

import (
	"testing"
	"unsafe"
)

func TestIBUserSALayout(t *testing.T) {
	checkLayouts(t, []layout{
		{"struct ib_path_rec_data", unsafe.Sizeof(IBPathRecData{}), 72, []offset{
			{"flags", unsafe.Offsetof(IBPathRecData{}.Flags), 0},
			{"reserved", unsafe.Offsetof(IBPathRecData{}.Reserved), 4},
			{"path_rec", unsafe.Offsetof(IBPathRecData{}.PathRec), 8},
		}},
		{"struct ib_user_path_rec", unsafe.Sizeof(IBUserPathRec{}), 64, []offset{
			{"dgid", unsafe.Offsetof(IBUserPathRec{}.DGID), 0},
			{"sgid", unsafe.Offsetof(IBUserPathRec{}.SGID), 16},
			{"dlid", unsafe.Offsetof(IBUserPathRec{}.DLID), 32},
			{"slid", unsafe.Offsetof(IBUserPathRec{}.SLID), 34},
			{"raw_traffic", unsafe.Offsetof(IBUserPathRec{}.RawTraffic), 36},
			{"flow_label", unsafe.Offsetof(IBUserPathRec{}.FlowLabel), 40},
			{"reversible", unsafe.Offsetof(IBUserPathRec{}.Reversible), 44},
			{"mtu", unsafe.Offsetof(IBUserPathRec{}.MTU), 48},
			{"pkey", unsafe.Offsetof(IBUserPathRec{}.PKey), 52},
			{"hop_limit", unsafe.Offsetof(IBUserPathRec{}.HopLimit), 54},
			{"traffic_class", unsafe.Offsetof(IBUserPathRec{}.TrafficClass), 55},
			{"numb_path", unsafe.Offsetof(IBUserPathRec{}.NumbPath), 56},
			{"sl", unsafe.Offsetof(IBUserPathRec{}.SL), 57},
			{"mtu_selector", unsafe.Offsetof(IBUserPathRec{}.MTUSelector), 58},
			{"rate_selector", unsafe.Offsetof(IBUserPathRec{}.RateSelector), 59},
			{"rate", unsafe.Offsetof(IBUserPathRec{}.Rate), 60},
			{"packet_life_time_selector", unsafe.Offsetof(IBUserPathRec{}.PacketLifeTimeSelector), 61},
			{"packet_life_time", unsafe.Offsetof(IBUserPathRec{}.PacketLifeTime), 62},
			{"preference", unsafe.Offsetof(IBUserPathRec{}.Preference), 63},
		}},
	})
	checkAligns(t, []align{
		{"struct ib_path_rec_data", unsafe.Alignof(IBPathRecData{}), 4},
		{"struct ib_user_path_rec", unsafe.Alignof(IBUserPathRec{}), 4},
	})
}

func TestIBUserSAConstants(t *testing.T) {
	checkConstants(t, []constant{
		{"IB_PATH_GMP", uint64(IB_PATH_GMP), 1},
		{"IB_PATH_PRIMARY", uint64(IB_PATH_PRIMARY), 2},
		{"IB_PATH_ALTERNATE", uint64(IB_PATH_ALTERNATE), 4},
		{"IB_PATH_OUTBOUND", uint64(IB_PATH_OUTBOUND), 8},
		{"IB_PATH_INBOUND", uint64(IB_PATH_INBOUND), 16},
		{"IB_PATH_INBOUND_REVERSE", uint64(IB_PATH_INBOUND_REVERSE), 32},
		{"IB_PATH_BIDIRECTIONAL", uint64(IB_PATH_BIDIRECTIONAL), 40},
	})
}
