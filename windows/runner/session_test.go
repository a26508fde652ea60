package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A relative supervisor path is resolved against the caller's directory
// before any driver starts it from elsewhere; a missing one is refused up
// front, naming the fix, instead of every window failing at prepare.
func TestOpenResolvesRelativeBinary(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("refsup", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Config{Bin: "./refsup", StateRoot: filepath.Join(dir, "state")}, dir, filepath.Join(dir, "out", "rows.jsonl"), &Provenance{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if want := filepath.Join(dir, "refsup"); s.Bin != want {
		t.Errorf("Bin = %q, want %q", s.Bin, want)
	}
	_, err = Open(Config{Bin: "./missing", StateRoot: filepath.Join(dir, "state")}, dir, filepath.Join(dir, "out", "other.jsonl"), &Provenance{})
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("missing binary: %v", err)
	}
}
