package described

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/drivers"
)

// withRequires is the minimal description with a requires: list.
func withRequires(t *testing.T, requires string) *Description {
	t.Helper()
	d, err := Parse("demo.yaml", []byte(strings.Replace(minimal, "timeout_ms: 1000\n", "timeout_ms: 1000\nrequires:\n"+requires, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func byName(ps []drivers.Prerequisite) map[string]drivers.Prerequisite {
	m := map[string]drivers.Prerequisite{}
	for _, p := range ps {
		m[p.Name] = p
	}
	return m
}

// The requires: list is checked for real: a command is found on PATH and
// run for its version, a file must be executable, a static one an ELF
// without an interpreter. Each check is named as doctor prints it.
func TestCheckHost(t *testing.T) {
	bin := t.TempDir()
	script(t, bin, "demo", "echo 'demo version 4.3.1'")
	script(t, bin, "old", "echo 'old version 3.0.1'")
	script(t, bin, "broken", "echo 'cannot start' >&2; exit 3")
	script(t, bin, "quiet", "echo 'no number here'")
	notStatic := script(t, bin, "helper", "true")
	d := withRequires(t, `  - {command: demo, version_args: [--version], min_version: "4.2", package: demo}
  - {command: old, version_args: [--version], min_version: "4"}
  - {command: broken, version_args: [--version]}
  - {command: quiet, version_args: [--version], min_version: "1"}
  - {command: absent, package: absent-pkg}
  - {name: helper file, files: [/nonexistent/helper, `+notStatic+`]}
  - {files: [/nonexistent/a, /nonexistent/b]}
  - {files: [`+notStatic+`], static: true}
`)
	got := d.CheckHost(context.Background(), bin)
	names := []string{"demo >= 4.2", "old >= 4", "broken", "quiet >= 1", "absent", "helper file", "a", "helper (static)"}
	if len(got) != len(names) {
		t.Fatalf("%d checks, want %d (the binary, demo, is required first and not twice): %+v", len(got), len(names), got)
	}
	for i, n := range names {
		if got[i].Name != n {
			t.Errorf("check %d named %q, want %q", i, got[i].Name, n)
		}
	}
	m := byName(got)
	for _, c := range []struct {
		name   string
		ok     bool
		detail string
	}{
		{"demo >= 4.2", true, filepath.Join(bin, "demo") + " version 4.3.1"},
		{"old >= 4", false, "version 3.0.1, want >= 4"},
		{"broken", false, "exit status 3: cannot start"},
		{"quiet >= 1", false, "prints no version number: no number here"},
		{"absent", false, "not found on PATH"},
		{"helper file", true, notStatic},
		{"a", false, "not in /nonexistent/a or /nonexistent/b"},
		{"helper (static)", false, notStatic},
	} {
		p := m[c.name]
		if p.OK != c.ok || !strings.Contains(p.Detail, c.detail) {
			t.Errorf("%s: OK %v %q, want OK %v and %q", c.name, p.OK, p.Detail, c.ok, c.detail)
		}
	}
	if m["demo >= 4.2"].Fix != "Debian package demo" || m["absent"].Fix != "Debian package absent-pkg" || m["broken"].Fix != "" {
		t.Errorf("fixes: %+v", got)
	}

	// Without requires, the binary itself is checked.
	d = withRequires(t, "")
	if got := d.CheckHost(context.Background(), t.TempDir()); len(got) != 1 || got[0].Name != "demo" || got[0].OK {
		t.Errorf("no requires: %+v", got)
	}
}

func TestRequiresErrors(t *testing.T) {
	for _, tc := range []struct{ name, req, want string }{
		{"neither", "  - {package: x}\n", "requires[0]: give either command"},
		{"both", "  - {command: x, files: [/x]}\n", "requires[0]: give either command"},
		{"path as command", "  - {command: /usr/bin/x}\n", "requires[0].command: \"/usr/bin/x\": name a command on PATH"},
		{"relative file", "  - {files: [bin/x]}\n", "requires[0].files[0]: \"bin/x\" is not an absolute path"},
		{"bad version", "  - {command: x, version_args: [-v], min_version: four}\n", "requires[0].min_version: \"four\""},
		{"version without args", "  - {command: x, min_version: \"4\"}\n", "requires[0].min_version: needs command and version_args"},
		{"args without command", "  - {files: [/x], version_args: [-v]}\n", "requires[0].version_args: needs command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("demo.yaml", []byte(strings.Replace(minimal, "timeout_ms: 1000\n", "timeout_ms: 1000\nrequires:\n"+tc.req, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// podman.yaml declares what doctor checked for podman before it was data.
func TestPodmanRequires(t *testing.T) {
	b, err := os.ReadFile("supervisors/podman.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("supervisors/podman.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range d.requirements() {
		names = append(names, r.label())
	}
	if got := strings.Join(names, ", "); got != "podman >= 4, runc, conmon, iptables, netavark, busybox (static)" {
		t.Errorf("podman requires %s", got)
	}
}

func TestVersions(t *testing.T) {
	for _, c := range []struct {
		got, want string
		ok        bool
	}{{"4.3.1", "4", true}, {"4", "4.0.0", true}, {"3.17.1", "4.2", false}, {"4.2", "4.2.1", false}, {"10.0", "9.9", true}} {
		g, _ := parseVersion(c.got)
		w, _ := parseVersion(c.want)
		if atLeast(g, w) != c.ok {
			t.Errorf("%s >= %s: %v", c.got, c.want, !c.ok)
		}
	}
}
