package ucmd

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
)

// cmdError names the failed command and keeps the errno matchable with
// errors.Is.
func cmdError(c *Cmd, err error) error {
	return fmt.Errorf("%s: %w", cmdName(c), err)
}

var cmdNames = map[uint32]string{
	abi.IB_USER_VERBS_CMD_GET_CONTEXT:         "GET_CONTEXT",
	abi.IB_USER_VERBS_CMD_QUERY_DEVICE:        "QUERY_DEVICE",
	abi.IB_USER_VERBS_CMD_QUERY_PORT:          "QUERY_PORT",
	abi.IB_USER_VERBS_CMD_ALLOC_PD:            "ALLOC_PD",
	abi.IB_USER_VERBS_CMD_DEALLOC_PD:          "DEALLOC_PD",
	abi.IB_USER_VERBS_CMD_CREATE_AH:           "CREATE_AH",
	abi.IB_USER_VERBS_CMD_DESTROY_AH:          "DESTROY_AH",
	abi.IB_USER_VERBS_CMD_REG_MR:              "REG_MR",
	abi.IB_USER_VERBS_CMD_REREG_MR:            "REREG_MR",
	abi.IB_USER_VERBS_CMD_DEREG_MR:            "DEREG_MR",
	abi.IB_USER_VERBS_CMD_ALLOC_MW:            "ALLOC_MW",
	abi.IB_USER_VERBS_CMD_DEALLOC_MW:          "DEALLOC_MW",
	abi.IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL: "CREATE_COMP_CHANNEL",
	abi.IB_USER_VERBS_CMD_CREATE_CQ:           "CREATE_CQ",
	abi.IB_USER_VERBS_CMD_RESIZE_CQ:           "RESIZE_CQ",
	abi.IB_USER_VERBS_CMD_DESTROY_CQ:          "DESTROY_CQ",
	abi.IB_USER_VERBS_CMD_REQ_NOTIFY_CQ:       "REQ_NOTIFY_CQ",
	abi.IB_USER_VERBS_CMD_CREATE_QP:           "CREATE_QP",
	abi.IB_USER_VERBS_CMD_QUERY_QP:            "QUERY_QP",
	abi.IB_USER_VERBS_CMD_MODIFY_QP:           "MODIFY_QP",
	abi.IB_USER_VERBS_CMD_DESTROY_QP:          "DESTROY_QP",
	abi.IB_USER_VERBS_CMD_POST_SEND:           "POST_SEND",
	abi.IB_USER_VERBS_CMD_CREATE_SRQ:          "CREATE_SRQ",
	abi.IB_USER_VERBS_CMD_MODIFY_SRQ:          "MODIFY_SRQ",
	abi.IB_USER_VERBS_CMD_QUERY_SRQ:           "QUERY_SRQ",
	abi.IB_USER_VERBS_CMD_DESTROY_SRQ:         "DESTROY_SRQ",
}

var exCmdNames = map[uint32]string{
	abi.IB_USER_VERBS_EX_CMD_QUERY_DEVICE: "EX_QUERY_DEVICE",
	abi.IB_USER_VERBS_EX_CMD_CREATE_CQ:    "EX_CREATE_CQ",
	abi.IB_USER_VERBS_EX_CMD_CREATE_QP:    "EX_CREATE_QP",
	abi.IB_USER_VERBS_EX_CMD_MODIFY_QP:    "EX_MODIFY_QP",
}

func cmdName(c *Cmd) string {
	names := cmdNames
	if c.Ex {
		names = exCmdNames
	}
	if s, ok := names[c.Num]; ok {
		return s
	}
	return fmt.Sprintf("command %d", c.Num)
}
