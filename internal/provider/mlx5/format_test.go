package mlx5

import (
	"testing"
	"unsafe"
)

// TestFormats: the device's formats, offset by offset (mlx5dv.h, wqe.h).
func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size, want uintptr
		offsets    [][2]uintptr // got, want
	}{
		{"ctrl seg", unsafe.Sizeof(ctrlSeg{}), 16, [][2]uintptr{
			{unsafe.Offsetof(ctrlSeg{}.opmodIdxOpcode), 0}, {unsafe.Offsetof(ctrlSeg{}.qpnDS), 4},
			{unsafe.Offsetof(ctrlSeg{}.signature), 8}, {unsafe.Offsetof(ctrlSeg{}.dciStream), 9},
			{unsafe.Offsetof(ctrlSeg{}.fmCESE), 11}, {unsafe.Offsetof(ctrlSeg{}.imm), 12}}},
		{"data seg", unsafe.Sizeof(dataSeg{}), 16, [][2]uintptr{
			{unsafe.Offsetof(dataSeg{}.byteCount), 0}, {unsafe.Offsetof(dataSeg{}.lkey), 4}, {unsafe.Offsetof(dataSeg{}.addr), 8}}},
		{"raddr seg", unsafe.Sizeof(raddrSeg{}), 16, [][2]uintptr{
			{unsafe.Offsetof(raddrSeg{}.raddr), 0}, {unsafe.Offsetof(raddrSeg{}.rkey), 8}, {unsafe.Offsetof(raddrSeg{}.reserved), 12}}},
		{"atomic seg", unsafe.Sizeof(atomicSeg{}), 16, [][2]uintptr{
			{unsafe.Offsetof(atomicSeg{}.swapAdd), 0}, {unsafe.Offsetof(atomicSeg{}.compare), 8}}},
		{"av", unsafe.Sizeof(av{}), 48, [][2]uintptr{
			{unsafe.Offsetof(av{}.qkey), 0}, {unsafe.Offsetof(av{}.reserved), 4}, {unsafe.Offsetof(av{}.dqpDCT), 8},
			{unsafe.Offsetof(av{}.statRateSL), 12}, {unsafe.Offsetof(av{}.flMLID), 13}, {unsafe.Offsetof(av{}.rlid), 14},
			{unsafe.Offsetof(av{}.reserved0), 16}, {unsafe.Offsetof(av{}.rmac), 20}, {unsafe.Offsetof(av{}.tclass), 26},
			{unsafe.Offsetof(av{}.hopLimit), 27}, {unsafe.Offsetof(av{}.grhGIDFL), 28}, {unsafe.Offsetof(av{}.rgid), 32}}},
		{"srq next seg", unsafe.Sizeof(srqNextSeg{}), 16, [][2]uintptr{
			{unsafe.Offsetof(srqNextSeg{}.nextWQEIndex), 2}, {unsafe.Offsetof(srqNextSeg{}.signature), 4}}},
		{"cqe64", unsafe.Sizeof(cqe{}), 64, [][2]uintptr{
			{unsafe.Offsetof(cqe{}.wqeID), 2}, {unsafe.Offsetof(cqe{}.mlPath), 17}, {unsafe.Offsetof(cqe{}.slid), 22},
			{unsafe.Offsetof(cqe{}.flagsRQPN), 24}, {unsafe.Offsetof(cqe{}.hdsIPExt), 28}, {unsafe.Offsetof(cqe{}.l4HdrTypeEtc), 29},
			{unsafe.Offsetof(cqe{}.vlanInfo), 30}, {unsafe.Offsetof(cqe{}.srqnUIdx), 32}, {unsafe.Offsetof(cqe{}.immInvalPKey), 36},
			{unsafe.Offsetof(cqe{}.app), 40}, {unsafe.Offsetof(cqe{}.appOp), 41}, {unsafe.Offsetof(cqe{}.appInfo), 42},
			{unsafe.Offsetof(cqe{}.byteCnt), 44}, {unsafe.Offsetof(cqe{}.timestamp), 48}, {unsafe.Offsetof(cqe{}.sopDropQPN), 56},
			{unsafe.Offsetof(cqe{}.wqeCounter), 60}, {unsafe.Offsetof(cqe{}.signature), 62}, {unsafe.Offsetof(cqe{}.opOwn), 63}}},
		{"err cqe", unsafe.Sizeof(errCQE{}), 64, [][2]uintptr{
			{unsafe.Offsetof(errCQE{}.srqn), 32}, {unsafe.Offsetof(errCQE{}.vendorErrSynd), 54}, {unsafe.Offsetof(errCQE{}.syndrome), 55},
			{unsafe.Offsetof(errCQE{}.sWQEOpcodeQPN), 56}, {unsafe.Offsetof(errCQE{}.wqeCounter), 60},
			{unsafe.Offsetof(errCQE{}.signature), 62}, {unsafe.Offsetof(errCQE{}.opOwn), 63}}},
	} {
		if tc.size != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.name, tc.size, tc.want)
		}
		for i, o := range tc.offsets {
			if o[0] != o[1] {
				t.Errorf("%s: field %d at %d, want %d", tc.name, i, o[0], o[1])
			}
		}
	}
	var f be32
	f.set(0x01020304)
	if f != [4]byte{1, 2, 3, 4} || f.get() != 0x01020304 {
		t.Errorf("be32 % x", f)
	}
}
