//go:build !purerdma_stub

package cq

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// NewChannel creates a completion channel on the device context dev
// (ibv_create_comp_channel).
func NewChannel(dev *uverbs.Context) (*Channel, error) {
	core := verbs.ContextOf(dev)
	if core == nil {
		return nil, fmt.Errorf("cq: create channel: nil context: %w", verbs.ErrInvalid)
	}
	var req abi.CreateCompChannel
	var resp abi.CreateCompChannelResp
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, Req: ucmd.Bytes(&req), Resp: ucmd.Bytes(&resp)}
	if err := core.Do(&cmd); err != nil {
		return nil, fmt.Errorf("cq: create channel: %w", err)
	}
	fd := int(resp.FD)
	// Non-blocking before os.NewFile, so that the file joins the poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("cq: create channel: %w", err)
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), core.Name+"-comp")
	ch := &Channel{core: core, file: f, ev: verbs.EventFile{File: f}}
	ch.id = core.Add(ch, ch.release)
	return ch, nil
}
