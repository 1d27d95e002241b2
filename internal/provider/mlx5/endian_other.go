//go:build !amd64 && !arm64

package mlx5

import "encoding/binary"

// littleEndian is endian_le.go's, found at run time elsewhere.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1
