package cq

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/uverbs"
)

// ErrCompletion matches every CompletionError.
var ErrCompletion = errors.New("work completion with error")

// ErrClosed is returned by operations on a closed CQ or channel. It is
// uverbs.ErrClosed.
var ErrClosed = uverbs.ErrClosed

// CompletionError is a work completion whose status is not Success.
type CompletionError struct {
	ID        uint64
	Status    Status
	VendorErr uint32
}

// Error names the work request, its status as ibv_wc_status_str does and
// the vendor error.
func (e *CompletionError) Error() string {
	return fmt.Sprintf("cq: work request %#x: %s (status %d, vendor error %#x)", e.ID, e.Status, uint32(e.Status), e.VendorErr)
}

// Is makes errors.Is(err, ErrCompletion) true.
func (e *CompletionError) Is(target error) bool { return target == ErrCompletion }
