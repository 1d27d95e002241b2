// Package abiconst holds one test: the public packages write their
// exported kernel constants as literals, so that go doc shows no internal
// name, and this table pins each to the generated internal/abi value its
// comment names.
package abiconst
