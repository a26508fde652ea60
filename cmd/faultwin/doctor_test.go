package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/drivers/catalog"
	"faultwin/drivers/doctor"
	"faultwin/internal/hosttest"
)

func requireRoot(t *testing.T) {
	t.Helper()
	hosttest.Need(t, "probes namespaces, veth and nftables")
}

func TestDoctorAllOK(t *testing.T) {
	requireRoot(t)
	var out bytes.Buffer
	if err := run(context.Background(), &out, []string{"doctor"}); err != nil {
		t.Fatalf("doctor failed on this host: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// faultwin's own 11, then each description's requires (a check two
	// share, once)
	want := 11 + len(catalog.HostChecks(context.Background(), t.TempDir()))
	if len(lines) != want {
		t.Fatalf("want one line per prerequisite (%d), got %d:\n%s", want, len(lines), out.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "OK ") {
			t.Errorf("not OK: %s", l)
		}
	}
}

func TestDoctorCRIUHidden(t *testing.T) {
	requireRoot(t)
	hidden := filepath.Join(t.TempDir(), "criu")
	var out bytes.Buffer
	err := run(context.Background(), &out, []string{"doctor", "--criu", hidden})
	if err == nil {
		t.Fatalf("doctor passed with CRIU hidden at %s:\n%s", hidden, out.String())
	}
	for _, name := range []string{"criu >= 4.2", "criu check"} {
		if !hasLine(out.String(), "MISSING", name) {
			t.Errorf("no MISSING line for %q:\n%s", name, out.String())
		}
	}
	if !strings.Contains(out.String(), doctor.Fix) {
		t.Errorf("MISSING lines do not name the fix %q:\n%s", doctor.Fix, out.String())
	}
	if !strings.Contains(err.Error(), "criu") {
		t.Errorf("error does not name criu: %v", err)
	}
}

func TestDoctorOldCRIU(t *testing.T) {
	// A stand-in binary that reports an old version: doctor must refuse it,
	// as it must refuse Debian 12's packaged 3.17.
	dir := t.TempDir()
	fake := filepath.Join(dir, "criu")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'Version: 3.17.1'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := doctor.Run(context.Background(), doctor.Config{CRIU: fake})
	for _, ch := range c {
		if ch.Name == "criu >= 4.2" {
			if ch.OK || !strings.Contains(ch.Detail, "3.17.1") {
				t.Fatalf("old criu accepted: %+v", ch)
			}
			return
		}
	}
	t.Fatal("no criu version check")
}

func TestDoctorToolHidden(t *testing.T) {
	requireRoot(t)
	var out bytes.Buffer
	err := run(context.Background(), &out, []string{"doctor", "--path", t.TempDir()})
	if err == nil || !hasLine(out.String(), "MISSING", "Xvfb") {
		t.Fatalf("Xvfb hidden but not reported MISSING (err %v):\n%s", err, out.String())
	}
	for _, tool := range []string{"podman >= 4", "runc", "conmon", "iptables"} {
		if !hasLine(out.String(), "MISSING", tool) {
			t.Errorf("%s hidden but not reported MISSING:\n%s", tool, out.String())
		}
	}
}

// A podman that is not version 4 is refused, as the described driver
// needs podman 4's flags.
func TestDoctorOldPodman(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "podman"), []byte("#!/bin/sh\necho 'podman version 3.0.1'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(context.Background(), &out, []string{"doctor", "--path", dir})
	if err == nil || !hasLine(out.String(), "MISSING", "podman >= 4") || !strings.Contains(out.String(), "version 3.0.1") {
		t.Fatalf("podman 3 accepted (err %v):\n%s", err, out.String())
	}
}

func TestUnknownVerb(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), &out, []string{"frobnicate"})
	if err == nil || !strings.Contains(err.Error(), "doctor") {
		t.Fatalf("unknown verb error should list verbs, got %v", err)
	}
}

// hasLine reports whether out has a line in state for the named check.
func hasLine(out, state, name string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && f[0] == state && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, state)), name) {
			return true
		}
	}
	return false
}
