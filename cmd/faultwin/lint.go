package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"faultwin/drivers/catalog"
	"faultwin/internal/model"
	"faultwin/windows/definitions"
	"faultwin/windows/expected"
)

const lintUsage = `usage: faultwin lint [FILE|DIR...]

Checks supervisor descriptions, window definitions and learned expected
outcomes without root and without touching the host: it reads files and
nothing else. Every problem of every file is printed, one a line, as
FILE:LINE: FIELD: PROBLEM (what to do): a value of the wrong type and the
meaning of the rest of its file together, the field named as it is
written (operations.stop.timeout_ms).

With no argument it checks the repository's own: the descriptions under
drivers/described/supervisors and the windows under windows/. A directory
stands for the *.yaml files below it; a file or directory named
supervisors, or a file whose top level has roles:, is a description; a
file under expected/ is a suite's learned outcomes; any other is window
definitions, checked against every supervisor the catalog knows and every
description given here (so a new supervisor and its windows are checked
together before either is installed).

Exit status: 0 no problem, 1 a problem, 64 a usage error (a path that does
not exist, no YAML file).
`

func runLint(_ context.Context, stdout io.Writer, args []string) error {
	fs0 := newFlags(stdout, "lint", lintUsage)
	fs0.supervisors()
	if err := fs0.parse(args); err != nil {
		return err
	}
	paths := fs0.Args()
	if len(paths) == 0 {
		paths = []string{"drivers/described/supervisors", "windows"}
	}
	files, misnamed, err := yamlFiles(paths)
	if err != nil {
		return fs0.usagef("%v", err)
	}
	// Each file is read once: its content tells a description from window
	// definitions, and is what is checked.
	var descs, windows []yamlFile
	var outcomes []string
	var problems []error
	// Every loader reads *.yaml only: a .yml file would be skipped
	// silently by the run that trusts this lint.
	for _, f := range misnamed {
		problems = append(problems, fmt.Errorf("%s:1: document: every loader reads *%s files only, so this one would be skipped (rename it to %s)",
			f, definitions.Ext, strings.TrimSuffix(filepath.Base(f), ".yml")+definitions.Ext))
	}
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == "expected" {
			outcomes = append(outcomes, f) // read by its own reader
			continue
		}
		b, err := os.ReadFile(f)
		switch {
		case err != nil:
			problems = append(problems, err)
		case isDescription(f, b):
			descs = append(descs, yamlFile{f, b})
		default:
			windows = append(windows, yamlFile{f, b})
		}
	}
	specs := map[string]model.DriverSpec{}
	for _, s := range catalog.Specs() {
		specs[s.Name] = s
	}
	for _, f := range descs {
		spec, err := catalog.ParseDescription(f.path, f.data)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		specs[spec.Name] = spec
	}
	all := make([]model.DriverSpec, 0, len(specs))
	for _, n := range slices.Sorted(maps.Keys(specs)) {
		all = append(all, specs[n])
	}
	families := shippedFamilies(all)
	for _, f := range windows {
		ws, err := definitions.ParseFile(f.path, f.data, all)
		if err != nil {
			problems = append(problems, err)
		}
		problems = append(problems, familyClashes(f.path, ws, families)...)
	}
	for _, f := range outcomes {
		if _, err := expected.ReadExpectations(f); err != nil {
			problems = append(problems, err)
		}
	}
	n := 0
	for _, p := range problems {
		for _, l := range strings.Split(p.Error(), "\n") {
			fmt.Fprintln(stdout, l)
			n++
		}
	}
	if n > 0 {
		return statusExit{exitFail, fmt.Sprintf("lint: %d problems in %d files (%d descriptions, %d window files, %d outcomes files)", n, len(files)+len(misnamed), len(descs), len(windows), len(outcomes))}
	}
	fmt.Fprintf(stdout, "lint: %d files, no problem (%d descriptions, %d window files, %d outcomes files)\n", len(files), len(descs), len(windows), len(outcomes))
	return nil
}

// yamlFile is one file lint checks, read.
type yamlFile struct {
	path string
	data []byte
}

// isDescription tells a supervisor description from window definitions:
// one under a supervisors directory, or whose top level has roles: (a
// description) or variant_of: (a variant of one).
func isDescription(path string, data []byte) bool {
	if strings.Contains(filepath.ToSlash(path), "/supervisors/") || filepath.Base(filepath.Dir(path)) == "supervisors" {
		return true
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "roles:") || strings.HasPrefix(l, "variant_of:") {
			return true
		}
	}
	return false
}

// yamlFiles lists the *.yaml files of paths: a file as given, a directory
// the files below it, in name order; and apart, the *.yml files below a
// directory (misnamed: no loader reads them).
func yamlFiles(paths []string) (out, misnamed []string, _ error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			if strings.HasSuffix(p, ".yml") {
				misnamed = append(misnamed, p)
				continue
			}
			out = append(out, p)
			continue
		}
		n := len(out)
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" && path != p {
				return filepath.SkipDir // test inputs, broken on purpose
			}
			switch {
			case d.IsDir():
			case strings.HasSuffix(path, definitions.Ext):
				out = append(out, path)
			case strings.HasSuffix(path, ".yml"):
				misnamed = append(misnamed, path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if len(out) == n && len(misnamed) == 0 {
			return nil, nil, errors.New(p + ": no *.yaml file below it")
		}
	}
	return out, misnamed, nil
}

// A window's family id names its rows in every report, merge and replay of
// rows of several supervisors together: it must be unique across them.
// familyClashes names the families of ws (from file) already defined in
// another directory, and adds ws's to seen.
func familyClashes(file string, ws []model.Window, seen map[string]model.Window) []error {
	var errs []error
	dir := filepath.Clean(filepath.Dir(file))
	for _, w := range ws {
		prev, ok := seen[w.Family]
		switch {
		case !ok:
			seen[w.Family] = w
		case filepath.Clean(filepath.Dir(prev.File)) != dir && !sameFile(prev.File, file):
			errs = append(errs, fmt.Errorf("%s:%d: id: %q is already the id of a window family in %s:%d (%s); ids are unique across every supervisor's windows: choose another",
				file, w.Line, w.Family, prev.File, prev.Line, cmp.Or(prev.Driver, model.DefaultDriver)))
		}
	}
	return errs
}

// shippedFamilies reads the family ids of the window directories of the
// repository lint runs in (windows/*/), so a user's windows checked alone
// are still held against them; none when lint runs elsewhere.
func shippedFamilies(specs []model.DriverSpec) map[string]model.Window {
	seen := map[string]model.Window{}
	dirs, _ := filepath.Glob(filepath.Join("windows", "*"))
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*"+definitions.Ext))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			ws, _ := definitions.ParseFile(f, b, specs) // its own problems are reported when it is linted
			for _, w := range ws {
				if _, ok := seen[w.Family]; !ok {
					seen[w.Family] = w
				}
			}
		}
	}
	return seen
}

// sameFile reports whether a and b name one file (a relative and an
// absolute spelling).
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
