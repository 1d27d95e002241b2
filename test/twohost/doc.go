// Package twohost holds the cross-host tests: the server side of each
// test runs in one guest and the client side in another, with RoCE
// packets crossing a virtual wire between them (go run ./hack/vm pair,
// make test). See docs/two-hosts.md.
package twohost
