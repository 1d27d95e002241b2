package vm

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/purerdma/purerdma/internal/netport"
	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// BootPair boots two guests, a and b, on one virtual Ethernet
// segment: QEMU's socket netdev, a listening and b connecting on the
// host's loopback. Each guest has rxe on its NIC besides its own rxe0 and
// siw0, so RoCE packets between them really cross a wire (between two
// addresses of one guest, rxe short-cuts them through its loopback path).
// Both guests run the same steps; the tests learn their side from
// PURERDMA_PAIR_ROLE: a is the server, b the client.

// PairModules are the NIC's modules; sch_netem is already among the
// optional modules.
var PairModules = []string{"virtio_net", "virtio_pci"}

// PairWire is the pair's wire: a serves, b is the client.
var PairWire = plan.Wire{
	Netdev: "eth0",
	Device: "rxe1",
	Guests: []plan.WireGuest{
		{Name: "a", MAC: "52:54:00:00:90:01", Prefix: "192.168.90.1/24", Role: "server"},
		{Name: "b", MAC: "52:54:00:00:90:02", Prefix: "192.168.90.2/24", Role: "client"},
	},
}

// guestRun is one guest of the pair and how its run ended.
type guestRun struct {
	wg       plan.WireGuest
	status   int
	err      error
	poweroff time.Time // when the guest asked to be powered off
	took     time.Duration
}

// BootPair boots a, waits for its end of the wire to listen, boots b, and
// waits for both, each from kernel k and initrd (which carries PairWire
// and PairModules), with their consoles on console (nil: stdout), each
// line prefixed with its guest's name.
func BootPair(env *fetch.Env, arch string, k *fetch.Kernel, initrd string, timeout time.Duration, console io.Writer) error {
	port, err := netport.Free()
	if err != nil {
		return err
	}
	out := &consoleMux{w: os.Stdout, start: time.Now()}
	if console != nil {
		out.w = console
	}
	env.Logf("booting guests a and b on one wire (127.0.0.1:%d), kernel %s (%s)", port, k.Version, SizeOf(initrd))
	runs := make([]*guestRun, len(PairWire.Guests))
	var wg sync.WaitGroup
	for i, w := range PairWire.Guests {
		r := &guestRun{wg: w}
		runs[i] = r
		end := "listen"
		if i > 0 {
			end = "connect"
			// b's QEMU connects at start, so a's must listen first.
			if err := waitListening(port, 2*time.Minute); err != nil {
				return err
			}
		}
		nic := []string{
			"-netdev", fmt.Sprintf("socket,id=wire,%s=127.0.0.1:%d", end, port),
			"-device", "virtio-net-pci,netdev=wire,mac=" + w.MAC + ",romfile=",
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(arch, k.Vmlinuz, initrd, timeout, out, nic)
		}()
	}
	wg.Wait()
	out.report(env)
	var failed []string
	for _, r := range runs {
		switch {
		case !r.poweroff.IsZero():
			env.Logf("guest %s (%s): powered off as it asked, after %v", r.wg.Name, r.wg.Role, r.took.Round(time.Second))
		case r.err != nil:
			env.Logf("guest %s (%s): %v", r.wg.Name, r.wg.Role, r.err)
			failed = append(failed, r.wg.Name)
		default:
			env.Logf("guest %s (%s): exit status %d after %v", r.wg.Name, r.wg.Role, r.status, r.took.Round(time.Second))
			if r.status != 0 {
				failed = append(failed, r.wg.Name)
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("pair: guest %s failed", strings.Join(failed, " and "))
	}
	return nil
}

// run boots the guest. A console line asking for power-off kills QEMU,
// as a pulled plug would stop the machine.
func (r *guestRun) run(arch, vmlinuz, initrd string, timeout time.Duration, out *consoleMux, nic []string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	console := out.guest(r.wg.Name, func(line string) {
		if strings.HasPrefix(line, plan.PowerOffPrefix+r.wg.Name) {
			mu.Lock()
			r.poweroff = time.Now()
			mu.Unlock()
			cancel()
			out.mark(r.wg.Name, "poweroff.start host kills QEMU")
		}
	})
	start := time.Now()
	status, err := Boot(ctx, arch, vmlinuz, initrd, timeout, console, false, nic...)
	mu.Lock()
	defer mu.Unlock()
	r.status, r.err, r.took = status, err, time.Since(start)
}

// waitListening waits until a's QEMU listens on port; probing with a
// connection would take the wire's only accept.
func waitListening(port int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for !netport.Listening(port) {
		if time.Now().After(deadline) {
			return fmt.Errorf("guest a's QEMU does not listen on 127.0.0.1:%d after %v", port, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// consoleMux interleaves the guests' consoles line by line, each line
// prefixed with its guest's name, and notes the marks the guests print.
type consoleMux struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	marks []mark
}

// mark is a moment a guest marked (plan.MarkPrefix), on the host's clock.
type mark struct {
	guest, name, text string
	at                time.Duration // since the pair's start
}

func (m *consoleMux) mark(guest, line string) {
	name, text, _ := strings.Cut(line, " ")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.marks = append(m.marks, mark{guest, name, text, time.Since(m.start)})
}

// report prints the marks, and the time from each NAME.start to the
// NAME.end after it.
func (m *consoleMux) report(env *fetch.Env) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.marks) == 0 {
		return
	}
	env.Logf("marks, on the host's clock since the guests started:")
	starts := map[string]mark{}
	for _, k := range m.marks {
		env.Logf("  %9.3fs  guest %s  %s %s", k.at.Seconds(), k.guest, k.name, k.text)
		if base, ok := strings.CutSuffix(k.name, ".start"); ok {
			starts[base] = k
		}
	}
	for _, k := range m.marks {
		base, ok := strings.CutSuffix(k.name, ".end")
		if s, found := starts[base]; ok && found && s.at <= k.at {
			env.Logf("figure %s: %v (from guest %s's start to guest %s's end, host clock)", base, (k.at - s.at).Round(time.Millisecond), s.guest, k.guest)
		}
	}
}

// GuestPrefix matches the "[a] " that BootPair's console puts in front
// of each of a guest's lines.
var GuestPrefix = regexp.MustCompile(`^\[[a-z]\] `)

func (m *consoleMux) guest(name string, onLine func(string)) io.Writer {
	return &guestConsole{m: m, name: name, prefix: "[" + name + "] ", onLine: onLine}
}

type guestConsole struct {
	m      *consoleMux
	name   string
	prefix string
	onLine func(string)
	buf    []byte
}

func (c *guestConsole) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	for {
		i := strings.IndexByte(string(c.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(c.buf[:i])
		c.buf = c.buf[i+1:]
		c.m.mu.Lock()
		fmt.Fprintf(c.m.w, "%s%s\n", c.prefix, line)
		c.m.mu.Unlock()
		if rest, ok := strings.CutPrefix(line, plan.MarkPrefix); ok {
			c.m.mark(c.name, rest)
		}
		c.onLine(line)
	}
}
