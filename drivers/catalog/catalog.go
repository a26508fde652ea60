// Package catalog names the drivers faultwin knows. Adding a driver means
// adding it here; the loader, the criteria and the runner stay as they are.
package catalog

import (
	"fmt"
	"slices"
	"strings"

	"faultwin/drivers"
	"faultwin/drivers/refsup"
	"faultwin/model"
)

// Options is what any driver may be built from; a driver ignores what it
// does not use.
type Options struct {
	Bin       string   // the supervisor's binary
	StateRoot string   // where runs keep their state
	LogDir    string   // harness-owned dir for the supervisor's own output
	Bugs      []string // known-bug switches (mutant runs only)
}

type entry struct {
	spec func() model.DriverSpec
	make func(Options) drivers.Driver
}

var known = map[string]entry{
	refsup.Name: {
		spec: refsup.Spec,
		make: func(o Options) drivers.Driver { return refsup.New(o.Bin, o.StateRoot, o.LogDir, o.Bugs) },
	},
}

// Names returns the known drivers, sorted.
func Names() []string {
	out := make([]string, 0, len(known))
	for n := range known {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Specs returns every known driver's published spec.
func Specs() []model.DriverSpec {
	out := make([]model.DriverSpec, 0, len(known))
	for _, n := range Names() {
		out = append(out, known[n].spec())
	}
	return out
}

// New returns a fresh driver named name.
func New(name string, o Options) (drivers.Driver, error) {
	e, ok := known[name]
	if !ok {
		return nil, fmt.Errorf("unknown driver %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return e.make(o), nil
}
