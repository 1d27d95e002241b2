package mmio

// FromDeviceAtomic is FromDevice for a caller that read the ownership
// marks with sync/atomic loads. On amd64 it is nothing, and inlines to
// nothing: FromDevice is only a compiler barrier there (x86 does not
// reorder loads with loads), and an atomic load already is one for the
// loads after it, which the compiler orders after it in its memory chain
// (an atomic load yields a new memory state; a plain load does not). A
// call to FromDevice cost a poll its spills and reloads around the call.
func FromDeviceAtomic() {}
