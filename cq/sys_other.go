//go:build !linux || purerdma_stub

package cq

import (
	"github.com/purerdma/purerdma/internal/unsupported"
	"github.com/purerdma/purerdma/uverbs"
)

// NewChannel creates a completion channel on the device context dev
// (sys_linux.go); without the Linux kernel it fails.
func NewChannel(dev *uverbs.Context) (*Channel, error) {
	return nil, unsupported.Error("create completion channel")
}
