package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/drivers/described"
	"faultwin/internal/model"
)

// A run's state dir says whose run it is: a described supervisor's marker,
// else refsup's.
func TestOwner(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "r1"), 0o755)
	os.MkdirAll(filepath.Join(root, "r2"), 0o755)
	os.WriteFile(described.MarkerPath(filepath.Join(root, "r2")), []byte("podman\n"), 0o644)
	if got := Owner(filepath.Join(root, "r1")); got != model.DefaultDriver {
		t.Errorf("unmarked run: %q", got)
	}
	if got := Owner(filepath.Join(root, "r2")); got != "podman" {
		t.Errorf("podman run: %q", got)
	}
}

// The sweep of a dead run is the owning driver's: refsup's is one call of
// its sweep verb on the run, its JSON report decoded.
func TestSweepDeadRefsup(t *testing.T) {
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	bin := filepath.Join(dir, "refsup")
	os.WriteFile(bin, []byte(`#!/bin/sh
echo "$@" > `+argv+`
echo '{"run":"r1","passes":1,"killed":[],"unmounted":["/m"],"links_deleted":[],"tables_deleted":[],"files_removed":[],"sysctls_restored":[],"ledger_removed":true,"survivors":[],"refused":[],"errors":[]}'
`), 0o755)
	root := filepath.Join(dir, "state")
	os.MkdirAll(filepath.Join(root, "r1"), 0o755)
	name, reports, err := SweepDead(context.Background(), Options{Bin: bin, StateRoot: root}, "r1")
	if err != nil || name != "refsup" || len(reports) != 1 || len(reports[0].Unmounted) != 1 || !reports[0].LedgerRemoved {
		t.Fatalf("SweepDead = %s, %+v, %v", name, reports, err)
	}
	if b, _ := os.ReadFile(argv); strings.TrimSpace(string(b)) != "sweep --root "+root+" --run r1" {
		t.Errorf("refsup called with %q", b)
	}
	if _, ok := LastResort("refsup"); ok {
		t.Error("refsup's runs get the last resort")
	}
	if tables, ok := LastResort("podman"); !ok || strings.Join(tables, ",") != "ip nat,ip filter" {
		t.Errorf("podman's last resort: %v %v", tables, ok)
	}

	// A run whose marker names no known supervisor is an error naming it.
	os.MkdirAll(filepath.Join(root, "r3"), 0o755)
	os.WriteFile(described.MarkerPath(filepath.Join(root, "r3")), []byte("nosuch\n"), 0o644)
	if name, _, err := SweepDead(context.Background(), Options{Bin: bin, StateRoot: root}, "r3"); name != "nosuch" || err == nil || !strings.Contains(err.Error(), `names supervisor "nosuch"`) {
		t.Errorf("unknown supervisor: %s %v", name, err)
	}
}

// Doctor's driver checks come from the drivers: each description's
// requires: list, in its order, the descriptions by name, a check two
// descriptions share once; refsup has none of its own.
func TestHostChecks(t *testing.T) {
	var names []string
	for _, p := range HostChecks(context.Background(), t.TempDir()) {
		names = append(names, p.Name)
	}
	got := strings.Join(names, ", ")
	// containerd's first (the descriptions in name order), podman's whole
	// and later, with whatever descriptions sort after podman behind it;
	// the checks containerd's CRI plugin and a later description share
	// with them appear once.
	podman := ", podman >= 4, conmon, iptables, netavark"
	i := strings.Index(got, podman)
	if !strings.HasPrefix(got, "containerd >= 1.6, ctr, containerd-shim-runc-v2, runc, busybox (static), bridge, crictl, ") ||
		i < 0 || (len(got) > i+len(podman) && !strings.HasPrefix(got[i+len(podman):], ", ")) {
		t.Errorf("host checks: %s", got)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("host check %q twice: %s", n, got)
		}
		seen[n] = true
	}
}
