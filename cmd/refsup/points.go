package main

import (
	"io"

	"faultwin/fixtures/refsup/bugs"
	"faultwin/fixtures/refsup/faults"
)

func cmdPoints(stdout io.Writer, args []string) error {
	var c common
	fs := newFlags("points", &c)
	if err := parse(fs, args); err != nil {
		return err
	}
	return printJSON(stdout, map[string]any{"points": faults.Points, "bugs": bugs.All})
}
