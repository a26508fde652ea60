// Package catalog names the drivers faultwin knows: refsup, written in Go,
// and every supervisor described as data (drivers/described/supervisors/*.yaml, and the files
// FAULTWIN_SUPERVISORS and a verb's --supervisor flags name). Adding a driver means adding it here or
// writing a description; the loader, the criteria and the runner stay as
// they are.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"faultwin/drivers"
	"faultwin/drivers/described"
	"faultwin/drivers/described/supervisors"
	"faultwin/drivers/refsup"
	"faultwin/internal/model"
)

// Options is what any driver may be built from; a driver ignores what it
// does not use.
type Options struct {
	Bin       string   // the supervisor's binary
	StateRoot string   // where runs keep their state
	LogDir    string   // harness-owned dir for the supervisor's own output
	Bugs      []string // known-bug switches (mutant runs only)
	// KillWait is how long refsup waits for a killed process to go (mutant
	// runs only, whose frozen strays never go; 0: refsup's default).
	KillWait time.Duration
}

type entry struct {
	spec func() model.DriverSpec
	make func(Options) drivers.Driver
	desc *described.Description
}

var (
	mu      sync.Mutex
	loaded  bool
	loadKey string   // the extra descriptions the table was built with
	given   []string // the files of --supervisor flags (Use)
	known   map[string]entry
	loadErr error
)

// Use adds description files or directories to the ones
// FAULTWIN_SUPERVISORS names, for the rest of the process: a verb's
// --supervisor flags. The table is built again on its next use.
func Use(paths []string) {
	mu.Lock()
	defer mu.Unlock()
	given = slices.Clone(paths)
}

// extra is the colon-separated list of extra descriptions: the
// environment's, then the flags'.
func extra() string {
	parts := []string{}
	if env := os.Getenv(described.EnvDirs); env != "" {
		parts = append(parts, env)
	}
	return strings.Join(append(parts, given...), ":")
}

// ensure builds the table when it was never built or the extra
// descriptions changed since.
func ensure() {
	mu.Lock()
	defer mu.Unlock()
	if key := extra(); !loaded || key != loadKey {
		load(key)
		loaded, loadKey = true, key
	}
}

// load builds the table: refsup, the built-in descriptions, then the
// extra ones. A description that does not parse is an error of every
// call, so a typo is never a silently missing driver.
func load(extra string) {
	known = map[string]entry{
		refsup.Name: {
			spec: refsup.Spec,
			make: func(o Options) drivers.Driver {
				d := refsup.New(o.Bin, o.StateRoot, o.LogDir, o.Bugs)
				d.KillWait = o.KillWait
				return d
			},
		},
	}
	descs, err := described.LoadFS(supervisors.Files, "drivers/described/supervisors/")
	if extra != "" {
		more, err2 := described.LoadPaths(extra, descs...)
		descs = append(descs, more...)
		err = errors.Join(err, err2)
	}
	for _, d := range descs {
		if prev, dup := known[d.Name]; dup {
			where := "the built-in driver"
			if prev.desc != nil {
				where = prev.desc.File
			}
			err = errors.Join(err, fmt.Errorf("%s: name: %q is already described by %s", d.File, d.Name, where))
			continue
		}
		d := d
		known[d.Name] = entry{spec: d.Spec, desc: d,
			make: func(o Options) drivers.Driver { return described.New(d, o.StateRoot, o.LogDir) }}
	}
	loadErr = err
}

// Err reports descriptions that could not be read.
func Err() error { ensure(); return loadErr }

// Names returns the known drivers, sorted.
func Names() []string {
	ensure()
	out := make([]string, 0, len(known))
	for n := range known {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Specs returns every known driver's published spec.
func Specs() []model.DriverSpec {
	ensure()
	out := make([]model.DriverSpec, 0, len(known))
	for _, n := range Names() {
		out = append(out, known[n].spec())
	}
	return out
}

// Spec returns the spec of the driver named name.
func Spec(name string) (model.DriverSpec, bool) {
	ensure()
	e, ok := known[name]
	if !ok {
		return model.DriverSpec{}, false
	}
	return e.spec(), true
}

// Description returns the description of a described driver (nil for
// refsup).
func Description(name string) *described.Description {
	ensure()
	return known[name].desc
}

// New returns a fresh driver named name.
func New(name string, o Options) (drivers.Driver, error) {
	ensure()
	e, ok := known[name]
	if !ok {
		if loadErr != nil {
			return nil, fmt.Errorf("unknown driver %q (known: %s); descriptions not read: %v", name, strings.Join(Names(), ", "), loadErr)
		}
		return nil, fmt.Errorf("unknown driver %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return e.make(o), nil
}

// Owner names the driver a run's state dir belongs to: the described
// supervisor its marker names, else the built-in driver.
func Owner(stateDir string) string {
	if name := described.DriverOf(stateDir); name != "" {
		return name
	}
	return model.DefaultDriver
}

// SweepDead runs, on run under o.StateRoot, the own sweep of the
// supervisor whose run it is (Owner), through the driver's
// drivers.DeadSweeper. It returns the driver's name and each sweep's
// report.
func SweepDead(ctx context.Context, o Options, run string) (string, []model.SweepReport, error) {
	name := Owner(model.StateDir(o.StateRoot, run))
	d, err := New(name, o)
	if err != nil {
		return name, nil, fmt.Errorf("its state dir names supervisor %q: %w", name, err)
	}
	defer d.Close()
	s, ok := d.(drivers.DeadSweeper)
	if !ok {
		return name, nil, fmt.Errorf("driver %s cannot sweep a run outside a window", name)
	}
	reports, err := s.SweepDead(ctx, run)
	return name, reports, err
}

// LastResort says whether the harness's last resort (drivers/reclaim)
// follows the own sweep of name's runs, and which nft tables it may remove
// once empty: so for a supervisor described as data, whose sweep faultwin
// did not write; never for refsup.
func LastResort(name string) (emptyTables []string, ok bool) {
	d := Description(name)
	if d == nil {
		return nil, false
	}
	return slices.Clone(d.Reclaim.EmptyTables), true
}

// HostChecks runs the host checks of every known driver that has any
// (drivers.HostChecker), in name order: what their supervisors need
// beyond faultwin's own prerequisites. path is the PATH to search ("" for
// the process's).
func HostChecks(ctx context.Context, path string) []drivers.Prerequisite {
	var out []drivers.Prerequisite
	seen := map[string]bool{}
	for _, name := range Names() {
		d, err := New(name, Options{})
		if err != nil {
			continue
		}
		if hc, ok := d.(drivers.HostChecker); ok {
			// Supervisors share tools (runc, busybox): one check each.
			for _, p := range hc.CheckHost(ctx, path) {
				if !seen[p.Name] {
					seen[p.Name] = true
					out = append(out, p)
				}
			}
		}
		_ = d.Close()
	}
	return out
}

// EnvDirs is the variable naming a user's description files and dirs.
const EnvDirs = described.EnvDirs

// ParseDescription reads one description as the catalog would register it
// (faultwin lint checks a user's before it is installed): its driver's
// published spec, or every problem of the file.
func ParseDescription(file string, data []byte) (model.DriverSpec, error) {
	d, err := parseOverKnown(file, data)
	if err != nil {
		return model.DriverSpec{}, err
	}
	return d.Spec(), nil
}

// parseOverKnown parses a description over every known one (a variant of a
// known supervisor is read over it).
func parseOverKnown(file string, data []byte) (*described.Description, error) {
	ensure()
	var bases []*described.Description
	for _, name := range Names() {
		if d := known[name].desc; d != nil {
			bases = append(bases, d)
		}
	}
	return described.ParseOver(file, data, bases)
}

// NameIn returns the name of the supervisor file describes (a variant of a
// known one is read over it), or every problem of the file.
func NameIn(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	d, err := parseOverKnown(file, data)
	if err != nil {
		return "", err
	}
	return d.Name, nil
}
