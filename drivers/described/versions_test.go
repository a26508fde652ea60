package described

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Description.Versions runs each required command's version_args (or --version) and
// keeps the first line it printed; a command that is missing or fails says
// why. Read once per description name.
func TestComponentVersions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("fwtool", `[ "$1" = version ] && { echo; echo "fwtool version 1.2.3"; echo "commit: abc"; exit 0; }; exit 2`)
	write("fwother", `echo "fwother 0.9"`)
	write("fwbroken", `echo "no such flag" >&2; exit 3`)
	d := &Description{Name: "versions-test", Binary: "fwtool", VersionArgs: []string{"version"}, PathPrepend: []string{dir},
		Requires: []Requirement{{Command: "fwother"}, {Command: "fwbroken"}, {Command: "fwmissing"}, {Files: []string{"/bin/sh"}}}}
	got := d.Versions(context.Background())
	want := map[string]string{"fwtool": "fwtool version 1.2.3", "fwother": "fwother 0.9", "fwbroken": "exit status 3: no such flag", "fwmissing": "not found on PATH"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("versions of %d commands, want %d: %v", len(got), len(want), got)
	}
	write("fwother", `echo "fwother 2.0"`)
	if again := d.Versions(context.Background()); again["fwother"] != "fwother 0.9" {
		t.Errorf("read again for the same description: %v", again)
	}
}
