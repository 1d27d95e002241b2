package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/purerdma/purerdma/internal/vm"

	"github.com/purerdma/purerdma/internal/vm/fetch"
	"github.com/purerdma/purerdma/internal/vm/plan"
)

// powerOffTest is the test after which its client guest is gone: it runs
// as the last step, and the other steps skip it.
const powerOffTest = "^TestPeerPowerOff$"

// pair builds the test binaries of the packages (./test/twohost by
// default) and runs them in both guests.
func pair(env *fetch.Env, o options, args []string) error {
	patterns, testFlags := splitArgs(args)
	if len(patterns) == 0 {
		patterns = []string{"./test/twohost"}
	}
	pkgs, err := integrationPackages(patterns)
	if err != nil {
		return err
	}
	if len(pkgs) == 0 {
		return fmt.Errorf("no integration test packages in %v", patterns)
	}
	flags := guestTestFlags(testFlags, o.timeout)
	g, err := buildGuest(env, o, plan.ModeTest, func(im *vm.Image, b *builder) error {
		im.NICModules = vm.PairModules
		im.Plan.Wire = &vm.PairWire
		if err := addTests(im, b, pkgs, append([]string{"-test.skip=" + powerOffTest}, flags...)); err != nil {
			return err
		}
		if wantsPowerOff(flags) {
			// The power-off test ends guest b, so it comes last, in a
			// binary of its own.
			for _, s := range im.Plan.Steps {
				if strings.HasSuffix(s.Name, "twohost") {
					s.Name += " (power off)"
					s.Args = slices.Concat(flags, []string{"-test.run=" + powerOffTest})
					im.Plan.Steps = append(im.Plan.Steps, s)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer g.cleanup()
	out := o.consoleOut()
	console := newFailures(out)
	if err := vm.BootPair(env, o.arch, g.kernel, g.initrd, o.timeout, console); err != nil {
		fmt.Fprint(out, console.report(fmt.Sprintf("%s guests on Linux %s", o.arch, g.kernel.Version)))
		return err
	}
	return nil
}

// wantsPowerOff reports whether the test flags select the power-off
// test: they have no -test.run, or one whose top level matches it.
func wantsPowerOff(flags []string) bool {
	for i, f := range flags {
		name, pattern, eq := strings.Cut(f, "=")
		if name != "-test.run" {
			continue
		}
		if !eq && i+1 < len(flags) {
			pattern = flags[i+1]
		}
		top, _, _ := strings.Cut(pattern, "/")
		ok, err := regexp.MatchString(top, strings.Trim(powerOffTest, "^$"))
		return err == nil && ok
	}
	return true
}
