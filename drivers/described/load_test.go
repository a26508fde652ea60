package described

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// A user's descriptions (FAULTWIN_SUPERVISORS) load from files and
// directories; a bad one is an error naming its file and line, never a
// silently missing driver.
func TestLoadPathsAndFS(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "demo.yaml"), []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(minimal, "timeout_ms: 1000", "timeout_ms: 1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadPaths(dir)
	if err != nil || len(ds) != 1 || ds[0].Name != "demo" || ds[0].File != filepath.Join(dir, "demo.yaml") {
		t.Fatalf("LoadPaths(dir) = %v, %v", ds, err)
	}
	ds, err = LoadPaths(dir + ":" + bad + ":" + filepath.Join(dir, "missing.yaml"))
	if len(ds) != 1 || err == nil || !strings.Contains(err.Error(), bad+":3: timeout_ms:") ||
		!strings.Contains(err.Error(), "missing.yaml") || !strings.Contains(err.Error(), EnvDirs) {
		t.Fatalf("LoadPaths with a bad and a missing file = %d, %v", len(ds), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.yml"), []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	if ds, err = LoadPaths(dir); len(ds) != 1 || err == nil || !strings.Contains(err.Error(), "other.yml:1: document: descriptions are read from *.yaml files only (rename it to other.yaml)") {
		t.Fatalf("LoadPaths of a dir with a .yml = %d, %v", len(ds), err)
	}
	ds, err = LoadFS(fstest.MapFS{"demo.yaml": {Data: []byte(minimal)}, "notes.txt": {Data: []byte("x")}}, "supervisors/")
	if err != nil || len(ds) != 1 || ds[0].File != "supervisors/demo.yaml" {
		t.Fatalf("LoadFS = %v, %v", ds, err)
	}
}
