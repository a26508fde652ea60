package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"faultwin/reports/decoded"
	"faultwin/reports/render"
	"faultwin/reports/rows"
)

// promPath refuses a --prom value that names no file to write.
func promPath(fs *verbFlags, path string) error {
	if path == "-" {
		return fs.usagef("--prom -: name a file (it is written whole or not at all, for node-exporter's textfile collector), not stdout")
	}
	return outPath(fs, "--prom", path)
}

// outPath checks, before anything runs, a file a verb is to write: not a
// directory, and in a directory that exists (written atomically beside
// it, never creating directories the user did not name). "" and "-" are
// not files.
func outPath(fs *verbFlags, flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fs.usagef("%s %s is a directory: name the file to write in it (like %s)", flag, path, filepath.Join(path, "report.html"))
	}
	if dir := filepath.Dir(path); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fs.usagef("%s %s: directory %s does not exist; create it first", flag, path, dir)
		}
	}
	return nil
}

// writeProm writes p to path in the Prometheus text format, atomically,
// and says so. A file of p.Files without its newest rows' finish times
// (Last nil) is read again for them, so the export states when the soak
// last wrote a row (faultwin_last_row_timestamp_seconds); what cannot be
// read adds nothing, its rows before the bad line still count.
func writeProm(stdout io.Writer, verb, path string, p render.Prom) error {
	p.Files = slices.Clone(p.Files)
	for i, f := range p.Files {
		if f.Last == nil {
			rs, _ := rows.Read(f.Path)
			p.Files[i].Last = render.LastFinished(decoded.Of(rs...))
		}
	}
	var b bytes.Buffer
	if err := render.Prometheus(&b, p); err != nil {
		return fmt.Errorf("%s: --prom: %w", verb, err)
	}
	if err := writeFileAtomic(path, b.Bytes()); err != nil {
		return fmt.Errorf("%s: --prom: %w", verb, err)
	}
	fmt.Fprintf(stdout, "%s: Prometheus text written to %s\n", verb, path)
	return nil
}
