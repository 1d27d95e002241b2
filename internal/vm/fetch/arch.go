package fetch

import (
	"runtime"
	"slices"
	"strings"
)

func hostArch() string { return runtime.GOARCH }

// foreignArch makes apt list arch's packages: a kernel for another
// architecture is downloaded as linux-image-<version>:<arch>, which apt only
// knows once dpkg accepts that architecture and the lists are fetched again.
func (e *Env) foreignArch(arch string) error {
	out, err := output("dpkg", "--print-foreign-architectures")
	if err != nil {
		return err
	}
	if slices.Contains(strings.Fields(out), arch) {
		return nil
	}
	e.Logf("adding %s to dpkg's architectures for its kernel package", arch)
	if err := e.root("", "dpkg", "--add-architecture", arch); err != nil {
		return err
	}
	// apt fetches the new architecture's lists only now: this update
	// runs even when the process has refreshed the lists already.
	e.refresh()
	return nil
}
