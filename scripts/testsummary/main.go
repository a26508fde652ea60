// Command testsummary reads `go test -json` on stdin, prints a per-package
// summary and fails when no test ran or any failed: a green run that
// executed nothing is a failure, not a pass.
//
// With --skipped FILE [PKG...] it prints instead the -run pattern of the
// top-level tests of PKG (import paths) that skipped, or had a subtest
// skip, in FILE, a unit tier's `go test -json`: the host tests the
// integration tier runs. It fails when FILE holds no test of PKG.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type counts struct{ pass, fail, skip int }

func main() {
	if len(os.Args) > 2 && os.Args[1] == "--skipped" {
		f, err := os.Open(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
		names, err := skippedTests(f, os.Args[3:])
		f.Close()
		if err != nil || len(names) == 0 {
			fmt.Fprintf(os.Stderr, "testsummary: %s: %v (no skipped test to run as root)\n", os.Args[2], err)
			os.Exit(2)
		}
		fmt.Println(runPattern(names))
		return
	}
	per := map[string]*counts{}
	var failed []string
	var output = map[string][]string{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		c := per[e.Package]
		if c == nil {
			c = &counts{}
			per[e.Package] = c
		}
		key := e.Package + " " + e.Test
		if e.Action == "output" && e.Test != "" {
			output[key] = append(output[key], e.Output)
		}
		if e.Test == "" {
			if e.Action == "fail" && c.fail == 0 {
				failed = append(failed, e.Package+" (package failed to build or run)")
			}
			continue
		}
		switch e.Action {
		case "pass":
			c.pass++
		case "fail":
			c.fail++
			failed = append(failed, key)
		case "skip":
			c.skip++
		}
	}
	pkgs := make([]string, 0, len(per))
	for p := range per {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var total counts
	for _, p := range pkgs {
		c := per[p]
		total.pass += c.pass
		total.fail += c.fail
		total.skip += c.skip
		if c.pass+c.fail+c.skip > 0 {
			fmt.Printf("%-45s pass %3d  fail %2d  skip %2d\n", p, c.pass, c.fail, c.skip)
		}
	}
	fmt.Printf("total: %d passed, %d failed, %d skipped\n", total.pass, total.fail, total.skip)
	for _, f := range failed {
		fmt.Printf("FAILED: %s\n", f)
		for _, l := range output[f] {
			fmt.Print("    ", l)
		}
	}
	switch {
	case total.pass == 0:
		fmt.Println("error: zero tests passed; a run that executes nothing is a failure")
		os.Exit(1)
	case len(failed) > 0:
		os.Exit(1)
	}
}
