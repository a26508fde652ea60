package definitions

import (
	"fmt"
	"slices"

	"faultwin/internal/model"
)

// Error is one problem in a definition file. Its text is
// "file:line: field: what is wrong (what to do)", so an editor can jump to it
// and the author knows the fix without reading the loader.
type Error struct {
	File    string
	Line    int
	Field   string // "id", "precondition.cold", "delays_ms[2]"; "document" for the whole
	Problem string
	Fix     string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Problem)
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

// problems collects every Error of a load, so one run of the loader reports
// all of them instead of the first.
type problems struct {
	file  string
	specs map[string]model.DriverSpec // the drivers windows may name
	errs  []error
}

func (p *problems) driverNames() []string {
	names := make([]string, 0, len(p.specs))
	for n := range p.specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (p *problems) add(line int, field, problem, fix string) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Field: field, Problem: problem, Fix: fix})
}

func (p *problems) addf(line int, field, fix, format string, args ...any) {
	p.add(line, field, fmt.Sprintf(format, args...), fix)
}
