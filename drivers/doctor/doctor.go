// Package doctor checks that a host can run faultwin windows for real: every
// check probes the real kernel feature (a namespace is entered, a veth made,
// an nft table written) instead of trusting a file that says it exists.
// These are faultwin's own prerequisites; what a driver's supervisor needs
// besides (podman's requires: list) comes from the driver, through
// drivers/catalog.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"

	"faultwin/snapshots/host"
)

// DefaultCRIU is where `make deps` installs CRIU. Debian's own criu (3.17)
// fails on this kernel, so faultwin never looks CRIU up on PATH.
var DefaultCRIU = host.CRIUPath

// Fix is the one command that installs every prerequisite.
const Fix = "sudo make deps"

// Config says where the probed tools are, so a test can hide one.
type Config struct {
	CRIU string // absolute path of the criu binary
	Path string // PATH used to find Xvfb and openbox; "" means the process's
}

// Check is one prerequisite's outcome.
type Check struct {
	Name     string
	OK       bool
	Detail   string // what was found
	Fix      string // what to run when not OK
	Optional bool   // reported, but does not fail the doctor
}

// Line renders c the way `faultwin doctor` prints it.
func (c Check) Line() string {
	state := "OK"
	if !c.OK {
		state = "MISSING"
		if c.Optional {
			state = "WARN"
		}
	}
	s := fmt.Sprintf("%-7s %-22s %s", state, c.Name, c.Detail)
	if !c.OK && c.Fix != "" {
		s += " (fix: " + c.Fix + ")"
	}
	return strings.TrimRight(s, " ")
}

// Run performs every check in order. It never stops at the first failure:
// an operator fixing a new machine wants the whole list at once.
func Run(ctx context.Context, cfg Config) []Check {
	if cfg.CRIU == "" {
		cfg.CRIU = DefaultCRIU
	}
	checks := []func(context.Context, Config) Check{
		checkRoot,
		checkKernel,
		checkCgroup,
		checkOverlay,
		checkNamespaces,
		checkVeth,
		checkNftables,
		checkCRIU,
		checkCRIUCheck,
		func(ctx context.Context, cfg Config) Check { return checkTool(cfg, "Xvfb", "xvfb") },
		func(ctx context.Context, cfg Config) Check { return checkTool(cfg, "openbox", "openbox") },
	}
	out := make([]Check, 0, len(checks))
	for _, f := range checks {
		out = append(out, f(ctx, cfg))
	}
	return out
}

// Report writes one line per check and returns an error naming every
// required prerequisite that is missing.
func Report(w io.Writer, checks []Check) error {
	var missing []string
	for _, c := range checks {
		fmt.Fprintln(w, c.Line())
		if !c.OK && !c.Optional {
			missing = append(missing, c.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing prerequisites: %s; run %q", strings.Join(missing, ", "), Fix)
	}
	return nil
}
