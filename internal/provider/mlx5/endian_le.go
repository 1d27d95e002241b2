//go:build amd64 || arm64

package mlx5

// littleEndian says whether a native store of bits.ReverseBytes64(v)
// puts v in memory big-endian, as a doorbell needs: a constant where
// mlx5 runs, so that Arm has no branch for it.
const littleEndian = true
