package main

import (
	"bytes"
	"fmt"
	"io"

	"faultwin/reports/render"
)

// promPath refuses a --prom value that names no file to write.
func promPath(fs *verbFlags, path string) error {
	if path == "-" {
		return fs.usagef("--prom -: name a file (it is written whole or not at all, for node-exporter's textfile collector), not stdout")
	}
	return nil
}

// writeProm writes p to path in the Prometheus text format, atomically,
// and says so.
func writeProm(stdout io.Writer, verb, path string, p render.Prom) error {
	var b bytes.Buffer
	if err := render.Prometheus(&b, p); err != nil {
		return err
	}
	if err := writeFileAtomic(path, b.Bytes()); err != nil {
		return fmt.Errorf("%s: --prom: %w", verb, err)
	}
	fmt.Fprintf(stdout, "%s: Prometheus text written to %s\n", verb, path)
	return nil
}
