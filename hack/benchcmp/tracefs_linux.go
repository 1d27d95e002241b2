package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// mountTracefs mounts tracefs where perf looks for the tracepoints, unless
// they are there: the guest's init mounts only proc, sysfs and tmpfs.
func mountTracefs() error {
	const dir = "/sys/kernel/tracing"
	if _, err := os.Stat(dir + "/events/sched"); err == nil {
		return nil
	}
	err := unix.Mount("nodev", dir, "tracefs", 0, "")
	if errors.Is(err, unix.EBUSY) {
		return nil
	}
	return err
}
