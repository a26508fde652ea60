package hostview

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/internal/model"
)

func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"bin", "faultwin", "data"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"bin/busybox": "ELF...", "data/a": "alpha", "data/b": "beta", "faultwin/counter": "1 m b"}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("busybox", filepath.Join(root, "bin/sh")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestManifestAndCompare(t *testing.T) {
	root := tree(t)
	m := ManifestOf(model.OfImage, "fw1", root, nil, []string{"faultwin"})
	if m.Err != "" {
		t.Fatal(m.Err)
	}
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "bin bin/busybox bin/sh data data/a data/b" {
		t.Fatalf("manifest lists %q (faultwin/ is skipped)", got)
	}
	if c := Compare(m, ""); len(c.Damage) != 0 || c.Checked != 6 || c.Err != "" {
		t.Fatalf("unchanged tree: %+v", c)
	}
	// What the workload writes, and a file that appeared, are no damage.
	os.WriteFile(filepath.Join(root, "faultwin/counter"), []byte("2 m b"), 0o644)
	os.WriteFile(filepath.Join(root, "data/new"), []byte("new"), 0o644)
	if c := Compare(m, ""); len(c.Damage) != 0 {
		t.Fatalf("writes outside the manifest are damage: %+v", c.Damage)
	}
	// Each kind of damage, named.
	os.Remove(filepath.Join(root, "data/a"))
	os.WriteFile(filepath.Join(root, "data/b"), []byte("BETA"), 0o644)
	os.Chmod(filepath.Join(root, "bin/busybox"), 0o600)
	os.Remove(filepath.Join(root, "bin/sh"))
	os.Symlink("other", filepath.Join(root, "bin/sh"))
	c := Compare(m, "")
	want := map[string]string{"data/a": "missing", "data/b": "content changed", "bin/busybox": "mode 0644 -> 0600", "bin/sh": "link busybox -> other"}
	if len(c.Damage) != len(want) {
		t.Fatalf("damage %+v, want %v", c.Damage, want)
	}
	for _, d := range c.Damage {
		if !strings.HasPrefix(d.What, want[d.Path]) {
			t.Errorf("%s: %q, want %q", d.Path, d.What, want[d.Path])
		}
	}
	if txt := c.Text(); !strings.Contains(txt, "4 of 6 files damaged") {
		t.Errorf("text %q", txt)
	}
	// A tree compared elsewhere (a restored root), and a root gone.
	other := tree(t)
	if c := Compare(m, other); len(c.Damage) != 0 {
		t.Errorf("an equal tree elsewhere: %+v", c.Damage)
	}
	if c := Compare(m, filepath.Join(root, "nope")); c.Err != "" || len(c.Damage) != 6 || !strings.HasPrefix(c.Damage[0].What, "missing") {
		t.Errorf("a root gone is every file missing: %+v", c)
	}
}

func TestManifestIncludeAndThroughProcRoot(t *testing.T) {
	root := tree(t)
	m := ManifestOf(model.OfCheckpoint, "", root, []string{"data"}, nil)
	if len(m.Files) != 3 || m.Files[0].Path != "data" {
		t.Fatalf("include data: %+v", m.Files)
	}
	// Our own process's root is /, read through /proc/self/root.
	self := ManifestOf(model.OfImage, "", "/proc/self/root", []string{root[1:] + "/bin"}, nil)
	if self.Err != "" || len(self.Files) != 3 {
		t.Fatalf("through /proc/self/root: %+v", self)
	}
	if c := Compare(self, "/proc/self/root"); len(c.Damage) != 0 || c.Checked != 3 {
		t.Errorf("compare through /proc/self/root: %+v", c)
	}
	all := ManifestOf(model.OfImage, "", "/proc/self/root", nil, []string{"proc", "sys", "dev", "run", "tmp", "var", "usr", "work", "root", "opt", "home", "etc", "boot", "srv", "mnt", "media", "lib", "lib64", "bin", "sbin"})
	if all.Err != "" {
		t.Errorf("whole root through /proc/self/root: %s", all.Err)
	}
	if d := ManifestOf(model.OfImage, "", filepath.Join(root, "nope"), nil, nil); d.Err == "" {
		t.Errorf("a missing root listed: %+v", d)
	}
}
