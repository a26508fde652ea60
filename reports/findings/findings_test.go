package findings

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/rows"
)

func TestNormalise(t *testing.T) {
	for in, want := range map[string]string{
		"cgroup /sys/fs/cgroup/blkio/faultwin/rb8ec52a5/libpod-20469feb1087c9b4de83b77d5b59d998c41b3e6ecf7e96e8a9abe073ce346cfe of the run (in after_sweep, after_sweep2)": "cgroup /sys/fs/cgroup/*/faultwin/<run>/libpod-<id> of the run",
		"fw1 before: boot 3d4f5f4d-d6c3-491c-b423-5a6dbf5ec705, counter 1":                                                                                                 "fw1 before: boot <id>, counter N",
		"pid 4157 (start 99812) podman   waits": "pid N (start N) podman waits",
		// one leftover of one bug under a random name each time
		"state entry /tmp/ctd-checkpoint1631021649 (dir): appeared during the run": "state entry /tmp/ctd-checkpointN (dir): appeared during the run",
		"open /tmp/ctrd-checkpoint47000682/descriptors.json: no such file":         "open /tmp/ctrd-checkpointN/descriptors.json: no such file",
		// a message stamped with its time (runc's logrus): one class whatever the second
		`said: restore fw1 failed (exit 1): time="2026-12-06T03:14:11Z" level=error msg="container with given ID already exists"`:                `said: restore fw1 failed (exit N): time="<time>" level=error msg="container with given ID already exists"`,
		`said: restore fw1 failed (exit 1): time="2026-12-06T03:13:39.123456789+01:00" level=error msg="container with given ID already exists"`: `said: restore fw1 failed (exit N): time="<time>" level=error msg="container with given ID already exists"`,
	} {
		if got := Normalise(in); got != want {
			t.Errorf("Normalise(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	// A loss with a message: the message is the class, whatever the
	// workload's identity read.
	a := Class(criteria.Result{ID: "U1", Evidence: []string{"fw1 does not run on: boot 1; the supervisor said: container restore fw1 failed (exit 125): Error: runc: container with given ID already exists"}})
	b := Class(criteria.Result{ID: "U1", Evidence: []string{"fw1 does not run on: boot 2; the supervisor said: container restore fw1 failed (exit 125): Error: runc: container with given ID already exists"}})
	if a != b || !strings.HasPrefix(a, "said: container restore fw1 failed (exit N)") {
		t.Errorf("one message, two classes: %q, %q", a, b)
	}
}

// On a checked-in soak: podman's leftover libpod cgroups are one finding
// per landing phase and role killed, over every window that showed them;
// each finding's rows are rows of the file, counted k of the measured N of
// its windows; the ids do not depend on the order of the rows.
func TestGroupOnASoak(t *testing.T) {
	const file = "../../results/podman/soak-10-f3c092a.jsonl.gz"
	c, err := rows.VerifyContents(file)
	if err != nil {
		t.Fatalf("%s: %v (the checked-in soak this test reads)", file, err)
	}
	fs := Group(decoded.Of(c.Rows...))
	if len(fs) == 0 {
		t.Fatal("no finding in a soak with FAIL rows")
	}
	hashes := map[string]bool{}
	for _, r := range c.Rows {
		hashes[r.Hash] = true
	}
	var cgroups *Finding
	for i, f := range fs {
		if f.Seen > f.Measured || f.Seen != len(f.Rows) || len(f.Windows) == 0 {
			t.Errorf("%s: seen %d of %d, %d rows, windows %v", f.ID, f.Seen, f.Measured, len(f.Rows), f.Windows)
		}
		for _, h := range f.Rows {
			if !hashes[h] {
				t.Errorf("%s names row %s, which the file does not hold", f.ID, h)
			}
		}
		if f.Criterion == "P3" && f.Phase == "prepare" && strings.Contains(f.Evidence, "libpod-<id>") {
			cgroups = &fs[i]
		}
	}
	if cgroups == nil || len(cgroups.Windows) < 5 {
		t.Fatalf("the libpod cgroups left in prepare are not one finding over many windows: %+v", cgroups)
	}
	rev := slices.Clone(c.Rows)
	slices.Reverse(rev)
	again := Group(decoded.Of(rev...))
	ids := func(fs []Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.ID)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(ids(fs), ids(again)) {
		t.Error("the finding ids depend on the order of the rows")
	}
}

// The libpod cgroups podman leaves are one line across every landing and
// role: its findings, their phases and windows summed, seen counts adding
// up to the findings'.
func TestAcrossPhases(t *testing.T) {
	c, err := rows.VerifyContents("../../results/podman/soak-10-f3c092a.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	fs := Group(decoded.Of(c.Rows...))
	across := AcrossPhases(fs)
	total := 0
	for _, f := range fs {
		total += f.Seen
	}
	sum := 0
	var cgroups *Across
	for i, a := range across {
		sum += a.Seen
		if a.Criterion == "P3" && strings.Contains(a.Evidence, "libpod-<id>") {
			cgroups = &across[i]
		}
	}
	if sum != total || len(across) >= len(fs) {
		t.Errorf("%d lines seen %d times, from %d findings seen %d times", len(across), sum, len(fs), total)
	}
	if cgroups == nil || len(cgroups.Phases) < 5 || len(cgroups.Findings) < 5 || across[0].Seen < cgroups.Seen {
		t.Fatalf("the libpod cgroups are not one line over many phases, or not sorted: %+v", cgroups)
	}
}

// TestControlsAndWorkarounds: a control row shows no finding of its own
// but counts against its window's finding of the same criterion and
// class; a stuck U1 names the expert step that worked, and the rows'
// versions are kept.
func TestControlsAndWorkarounds(t *testing.T) {
	row := func(window string, control bool, status string, res ...criteria.Result) rows.Row {
		b, _ := json.Marshal(res)
		r := rows.Row{Window: model.Window{ID: window, Fault: model.Fault{Disarmed: control}}, Driver: "podman", Status: status, Criteria: b,
			Hash: window + status + strings.Repeat("c", len(res)) + map[bool]string{true: "ctl"}[control]}
		r.Host.Versions = map[string]string{"runc": "runc version 1.1.5"}
		return r
	}
	leak := criteria.Result{ID: "P3", Judged: true, Summary: "1 cgroup left", Evidence: []string{"cgroup /sys/fs/cgroup/cpu/faultwin/r1/libpod-1 of the run"}}
	stuck := criteria.Result{ID: "U1", Judged: true,
		Summary:  "stuck: fw1 does not run on: unreadable; only the expert step delete-runc-state brought it back",
		Evidence: []string{"fw1 does not run on: unreadable; the supervisor said: container restore fw1 failed (exit 125): Error: runc: container with given ID already exists"}}
	rs := []rows.Row{
		row("PR4", false, "FAIL", leak, stuck),
		row("PR4", false, "PASS"),
		row("PR4", true, "FAIL", leak),
		row("PR4", true, "PASS"),
		row("PR4", true, "PASS"),
	}
	fs := Group(decoded.Of(rs...))
	if len(fs) != 2 {
		t.Fatalf("want the leak and the loss, got %+v", fs)
	}
	for _, f := range fs {
		if f.Seen != 1 || f.Measured != 2 || f.ControlMeasured != 3 {
			t.Errorf("%s %s: seen %d/%d, control measured %d", f.ID, f.Criterion, f.Seen, f.Measured, f.ControlMeasured)
		}
		switch f.Criterion {
		case "P3":
			if f.ControlSeen != 1 || len(f.Workarounds) != 0 {
				t.Errorf("the leak: control %d/%d, workarounds %v", f.ControlSeen, f.ControlMeasured, f.Workarounds)
			}
		case "U1":
			if f.ControlSeen != 0 || !slices.Equal(f.Workarounds, []string{"delete-runc-state"}) {
				t.Errorf("the loss: control %d/%d, workarounds %v", f.ControlSeen, f.ControlMeasured, f.Workarounds)
			}
		}
		if !slices.Equal(f.Versions, []string{"runc: runc version 1.1.5"}) {
			t.Errorf("%s: versions %v", f.ID, f.Versions)
		}
	}
}
