package testenv

// FindNative is findNative for the external tests, which hack/vm runs in
// the guest (it packs the packages whose tests import testenv).
var FindNative = findNative
