package uverbs_test

import "golang.org/x/sys/unix"

var errnoByName = map[string]error{
	"EINVAL": unix.EINVAL, "ENOMEM": unix.ENOMEM, "EBUSY": unix.EBUSY, "EBADF": unix.EBADF,
}
