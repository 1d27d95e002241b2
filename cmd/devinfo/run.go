package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/purerdma/purerdma/uverbs"
)

// run is the whole program: it parses args (without the program name) as
// ibv_devinfo does and writes the report to w. Like ibv_devinfo it goes on
// to the next device when one fails and returns the errors together.
func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("devinfo", flag.ContinueOnError)
	fs.SetOutput(w)
	var (
		devName string
		port    int
		list    bool
		verbose bool
	)
	fs.StringVar(&devName, "d", "", "use IB device `dev` (default all devices)")
	fs.StringVar(&devName, "ib-dev", "", "same as -d")
	fs.IntVar(&port, "i", 0, "use `port` of the IB device (default all ports)")
	fs.IntVar(&port, "ib-port", 0, "same as -i")
	fs.BoolVar(&list, "l", false, "print only the IB device names")
	fs.BoolVar(&list, "list", false, "same as -l")
	fs.BoolVar(&verbose, "v", false, "print all the attributes of the IB device(s)")
	fs.BoolVar(&verbose, "verbose", false, "same as -v")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	portSet := false
	fs.Visit(func(f *flag.Flag) { portSet = portSet || f.Name == "i" || f.Name == "ib-port" })
	if portSet && port <= 0 {
		return fmt.Errorf("invalid port %d: ports are numbered from 1", port)
	}

	devs, err := uverbs.Devices()
	if err != nil {
		return fmt.Errorf("failed to get IB devices list: %w", err)
	}
	if list {
		names := make([]string, len(devs))
		for i, d := range devs {
			names[i] = d.Name
		}
		return printList(w, names)
	}
	if devName != "" {
		var found []uverbs.Device
		for _, d := range devs {
			if d.Name == devName {
				found = append(found, d)
				break
			}
		}
		if found == nil {
			return fmt.Errorf("IB device '%s' wasn't found", devName)
		}
		devs = found
	} else if len(devs) == 0 {
		return errors.New("no IB devices found")
	}

	var errs []error
	for _, d := range devs {
		info, qerr := query(d, port, verbose)
		if info != nil {
			if err := printDevice(w, info, verbose); err != nil {
				return err
			}
		}
		if qerr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Name, qerr))
		}
	}
	return errors.Join(errs...)
}

// query gathers what printDevice needs about d: the device attributes and
// those of the selected port, or of every port when port is 0. When a port
// query fails it returns the ports before it along with the error, so that
// the output stops where ibv_devinfo's does; when the device itself fails,
// nothing is printed for it. With verbose it also reads each port's GID
// table.
func query(d uverbs.Device, port int, verbose bool) (*deviceInfo, error) {
	ctx, err := uverbs.Open(d)
	if err != nil {
		return nil, fmt.Errorf("failed to open device: %w", err)
	}
	defer ctx.Close()
	attr, err := ctx.QueryDevice()
	if err != nil {
		return nil, fmt.Errorf("failed to query device props: %w", err)
	}
	if port > int(attr.PhysPortCnt) {
		return nil, fmt.Errorf("invalid port %d requested for device (it has %d)", port, attr.PhysPortCnt)
	}
	info := &deviceInfo{
		Name:      d.Name,
		Transport: transportOf(d.NodeType),
		BoardID:   readBoardID(d.Name),
		CompVecs:  ctx.NumCompVectors(),
		Attr:      attr,
	}
	for p := 1; p <= int(attr.PhysPortCnt); p++ {
		if port != 0 && p != port {
			continue
		}
		pa, err := ctx.QueryPort(uint8(p))
		if err != nil {
			return info, fmt.Errorf("failed to query port %d props: %w", p, err)
		}
		pi := portInfo{Num: uint8(p), Attr: pa}
		if verbose {
			ents, err := ctx.GIDTable(uint8(p))
			if err != nil {
				return info, fmt.Errorf("failed to query gid to port %d: %w", p, err)
			}
			for _, e := range ents {
				// ibv_devinfo skips an entry whose interface ID (the
				// low 8 bytes) is zero, whatever its prefix.
				if [8]byte(e.GID[8:]) == [8]byte{} || e.Index >= pa.GIDTblLen {
					continue
				}
				pi.GIDs = append(pi.GIDs, gidLine{Index: e.Index, GID: e.GID, Type: e.Type})
			}
		}
		info.Ports = append(info.Ports, pi)
	}
	if err := ctx.Close(); err != nil {
		return info, fmt.Errorf("failed to close device: %w", err)
	}
	return info, nil
}

// readBoardID reads the board_id that some drivers (mlx5, hfi1...) put in
// sysfs, as ibv_read_sysfs_file does: one trailing newline dropped, and ""
// when the file is missing or empty.
func readBoardID(dev string) string {
	b, err := os.ReadFile(filepath.Join("/sys/class/infiniband", dev, "board_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}
