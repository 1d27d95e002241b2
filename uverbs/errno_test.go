package uverbs_test

import "syscall"

var errnoByName = map[string]error{
	"EINVAL": syscall.EINVAL, "ENOMEM": syscall.ENOMEM, "EBUSY": syscall.EBUSY, "EBADF": syscall.EBADF,
}
