// Package guest is the VM's /init: it runs as PID 1 in a static Go
// program, with no shell or busybox beside it. It mounts the pseudo file
// systems, loads the RDMA modules, creates rxe0 and (in amd64 guests, which
// have siw.ko) siw0 on veth pairs, runs the plan the host packed, prints
// the combined status and powers the guest off.
//
// cmd/rdmavm is the program: it calls Main when the kernel starts it as
// PID 1, so the binary users install boots the guests it runs in, and
// make test's guests (hack/vm) boot the same one.
package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/vm/plan"
)

// Main is init's whole life: it never returns, the guest powers off.
func Main() {
	console()
	status := 2
	defer func() {
		if r := recover(); r != nil {
			fmt.Printf("purerdma-vm: init panicked: %v\n%s", r, debug.Stack())
			status = 2
		}
		fmt.Printf("%s%d\n", plan.StatusPrefix, status)
		powerOff()
	}()
	p, err := setup()
	if err != nil {
		fmt.Println("purerdma-vm: setup failed:", err)
		return
	}
	status = run(p)
}

// console points stdin, stdout and stderr at the serial console; the
// initramfs has no /dev/console node, so the kernel could not.
func console() {
	os.MkdirAll("/dev", 0o755)
	unix.Mount("devtmpfs", "/dev", "devtmpfs", 0, "")
	fd, err := unix.Open("/dev/console", unix.O_RDWR, 0)
	if err != nil {
		return
	}
	for i := 0; i < 3; i++ {
		unix.Dup3(fd, i, 0)
	}
	if fd > 2 {
		unix.Close(fd)
	}
}

func setup() (*plan.Plan, error) {
	start := time.Now()
	if err := mountAll(); err != nil {
		return nil, err
	}
	p, err := readPlan()
	if err != nil {
		return nil, err
	}
	if err := loadModules(plan.ModulesDir); err != nil {
		return nil, err
	}
	if err := network(p); err != nil {
		return nil, err
	}
	summary, err := rdmaLinks(p)
	if err != nil {
		return nil, err
	}
	if p.Wire != nil {
		w, err := wire(p)
		if err != nil {
			return nil, fmt.Errorf("wire: %w", err)
		}
		summary += "; " + w
	}
	fmt.Printf("purerdma-vm: %s guest up in %v: %s\n", runtime.GOARCH, time.Since(start).Round(time.Millisecond), summary)
	return p, nil
}

func readPlan() (*plan.Plan, error) {
	b, err := os.ReadFile(plan.Path)
	if err != nil {
		return nil, err
	}
	var p plan.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", plan.Path, err)
	}
	return &p, nil
}

type mount struct {
	source, target, fstype string
}

func mountAll() error {
	for _, m := range []mount{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"tmpfs", "/tmp", "tmpfs"},
		{"tmpfs", "/run", "tmpfs"},
	} {
		if err := os.MkdirAll(m.target, 0o755); err != nil {
			return err
		}
		if m.fstype == "tmpfs" && packed(m.target) {
			// rdmavm packs a working directory under /tmp at its host
			// path (go test's throw-away modules live there); the
			// initramfs is writable already, so keep it visible.
			continue
		}
		if err := unix.Mount(m.source, m.target, m.fstype, 0, ""); err != nil {
			return fmt.Errorf("mount %s: %w", m.target, err)
		}
	}
	return nil
}

// packed reports whether the initramfs put anything under dir.
func packed(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

func powerOff() {
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	// With -no-reboot QEMU exits on a reset too.
	unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	for {
		time.Sleep(time.Hour)
	}
}

// environ is the environment of every step.
func environ(p *plan.Plan) []string {
	env := map[string]string{
		// The project's tools come last, so that testenv.CTool finds the C
		// programs of the same name (ibv_devices) and never our own.
		"PATH":             "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:/opt/purerdma/bin",
		"HOME":             "/tmp",
		"TMPDIR":           "/tmp",
		"TERM":             "dumb",
		"PURERDMA_VM":      "1",
		"PURERDMA_VM_ARCH": runtime.GOARCH,
		// The running kernel, for skip messages that name a missing
		// kernel feature.
		"PURERDMA_VM_KERNEL": kernelRelease(),
	}
	for _, d := range p.GuestDevices(runtime.GOARCH) {
		key := "PURERDMA_" + strings.ToUpper(d.Type)
		env[key] = d.Name
		env[key+"_NETDEV"] = d.Netdev
		env[key+"_ADDR"], _, _ = strings.Cut(d.Prefix, "/")
	}
	if p.CTools {
		env["PURERDMA_CTOOLS"] = "1"
	}
	if p.Extra {
		// Before the project's tools, after the system's: the extra
		// files are the host's programs, asked for by name.
		env["PATH"] = strings.Replace(env["PATH"], ":/opt/purerdma/bin", ":"+plan.ExtraDir+":/opt/purerdma/bin", 1)
		env["PURERDMA_EXTRA"] = plan.ExtraDir
	}
	for k, v := range p.Env {
		env[k] = v
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	return list
}
