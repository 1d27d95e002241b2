//go:build !(armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64)

package rxe

// isBigEndian says whether the host stores the most significant byte
// first; a constant, so that beSwap compiles to a byte swap alone.
const isBigEndian = false
