package fetch

import "runtime"

func hostArch() string { return runtime.GOARCH }
