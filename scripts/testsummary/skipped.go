package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// skippedTests reads a `go test -json` run and returns, for the packages
// named (all when none), the top-level tests that skipped or had a
// subtest skip: in the unit tier those are the host tests (hosttest.Need
// skips them there), which the integration tier runs, and only those: a
// test that passed or failed in the unit tier ran already, as root in CI.
func skippedTests(r io.Reader, pkgs []string) ([]string, error) {
	want := func(p string) bool { return len(pkgs) == 0 || slices.Contains(pkgs, p) }
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" || !want(e.Package) {
			continue
		}
		n++
		if e.Action == "skip" {
			top, _, _ := strings.Cut(e.Test, "/")
			seen[top] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("no test of %s in the run", strings.Join(pkgs, ", "))
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// runPattern is go test's -run for exactly names.
func runPattern(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}
