package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseLoadAvg(t *testing.T) {
	l, err := parseLoadAvg("0.52 0.58 0.59 2/345 12345\n")
	if err != nil || l != [3]float64{0.52, 0.58, 0.59} {
		t.Fatalf("%v %v", l, err)
	}
	for _, bad := range []string{"", "0.5 0.5", "a b c d"} {
		if _, err := parseLoadAvg(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	m, err := parseMemTotal("MemFree:  100 kB\nMemTotal:       16384000 kB\n")
	if err != nil || m != 16384000*1024 {
		t.Fatalf("%d %v", m, err)
	}
	for _, bad := range []string{"MemFree: 1 kB\n", "MemTotal: x kB\n", "MemTotal: 12 MB\n"} {
		if _, err := parseMemTotal(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseCRIUVersion(t *testing.T) {
	v, err := parseCRIUVersion("Version: 4.2.1\nGitID: v4.2.1\n")
	if err != nil || v != "4.2.1" {
		t.Fatalf("%q %v", v, err)
	}
	if _, err := parseCRIUVersion("criu: unknown option\n"); err == nil {
		t.Fatal("no version parsed")
	}
}

func TestCgroupKind(t *testing.T) {
	cases := []struct {
		magic, unified int64
		want           string
	}{
		{unix.CGROUP2_SUPER_MAGIC, 0, "v2"},
		{unix.TMPFS_MAGIC, unix.CGROUP2_SUPER_MAGIC, "hybrid"},
		{unix.TMPFS_MAGIC, unix.TMPFS_MAGIC, "v1"},
		{unix.TMPFS_MAGIC, 0, "v1"},
	}
	for _, c := range cases {
		if got, err := cgroupKind(c.magic, c.unified); err != nil || got != c.want {
			t.Errorf("%x/%x: %q %v", c.magic, c.unified, got, err)
		}
	}
	if _, err := cgroupKind(unix.EXT4_SUPER_MAGIC, 0); err == nil {
		t.Error("ext4 judged a cgroup root")
	}
}

func TestCRIUVersionRunsBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "criu")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'Version: 4.2.1'\necho 'GitID: v4.2.1'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := CRIUVersion(bin); err != nil || v != "4.2.1" {
		t.Fatalf("%q %v", v, err)
	}
	if _, err := CRIUVersion(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Fatal("an absent binary had a version")
	}
}

// TestHostFacts reads this machine: facts every Linux host has must be
// there, and a missing CRIU must be said, not hidden.
func TestHostFacts(t *testing.T) {
	old := CRIUPath
	CRIUPath = filepath.Join(t.TempDir(), "no-criu")
	defer func() { CRIUPath = old }()
	h := Facts()
	if h.Kernel == "" || h.Cores < 1 || h.MemBytes == 0 || h.Arch == "" {
		t.Fatalf("%+v", h)
	}
	if h.CgroupVersion == "" && !slices.ContainsFunc(h.Missing, func(m string) bool { return strings.HasPrefix(m, "cgroup version") }) {
		t.Errorf("no cgroup version and nothing said: %+v", h)
	}
	if h.CRIUVersion != "" || !slices.ContainsFunc(h.Missing, func(m string) bool { return strings.HasPrefix(m, "criu version: ") }) {
		t.Errorf("absent CRIU not reported: %+v", h)
	}
	if _, err := LoadAvg(); err != nil {
		t.Error(err)
	}
	t.Logf("%+v", h)
}

func TestVersionAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"4.2.1": true, "4.2": true, "4.10": true, "5.0": true, "4.1.9": false, "3.17.1": false} {
		if got, err := VersionAtLeast(v, [3]int{4, 2, 0}); err != nil || got != want {
			t.Errorf("VersionAtLeast(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := VersionAtLeast("4.x", [3]int{4, 2, 0}); err == nil {
		t.Error("4.x accepted")
	}
}

func TestDistro(t *testing.T) {
	p := filepath.Join(t.TempDir(), "os-release")
	if err := os.WriteFile(p, []byte("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := distro(p); err != nil || d != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("distro: %q, %v", d, err)
	}
	if err := os.WriteFile(p, []byte("ID=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := distro(p); err == nil {
		t.Error("no PRETTY_NAME, no error")
	}
}
