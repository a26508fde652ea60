package host

import (
	"slices"
	"testing"

	"faultwin/snapshots"
)

func diffBase() snapshots.Snapshot {
	return snapshots.Snapshot{
		Label: "preflight",
		Processes: []snapshots.Process{
			{PID: 10, StartTime: 100, Comm: "refsup", State: "S", Argv: []string{"refsup", "--tag", "faultwin:r1"}},
			{PID: 11, StartTime: 101, Comm: "sleep", State: "S", Decoy: true},
		},
		Mounts: []snapshots.Mount{
			{ID: 30, Parent: 1, MountPoint: "/var/lib/fw/r1/root", FSType: "overlay", Source: "overlay", NS: 5},
		},
		Links:   []snapshots.Link{{Name: "dvh0", Index: 7, Kind: "veth", Up: true}},
		Tables:  []snapshots.Table{{Family: "inet", Name: "faultwin_r1"}},
		X11:     []snapshots.File{{Path: "/tmp/.X11-unix/X5", Kind: "symlink", Target: "/var/lib/fw/r1/x11/X5"}},
		Ledgers: []snapshots.File{{Path: "/var/lib/fw/r1/ledger.json", Kind: "file"}},
		CRIUTmp: []snapshots.File{{Path: "/tmp/.criu.mntns.x", Kind: "dir"}},
		Sysctls: map[string]string{"net.ipv4.ip_forward": "0"},
		Cgroups: []string{"/sys/fs/cgroup/memory/faultwin_r1"},
	}
}

func TestDiffEqual(t *testing.T) {
	a, b := diffBase(), diffBase()
	b.Label = "after_sweep" // labels and times are not host state
	if d := diffSnapshots(a, b); len(d) != 0 {
		t.Fatalf("Diff of equal snapshots = %q", d)
	}
	if d := diffSnapshots(snapshots.Snapshot{}, snapshots.Snapshot{Sysctls: map[string]string{}}); len(d) != 0 {
		t.Fatalf("nil vs empty = %q", d)
	}
}

func TestDiffChanges(t *testing.T) {
	a, b := diffBase(), diffBase()
	// pid 10 reused: same pid, new start time.
	b.Processes[0].StartTime = 200
	// the decoy became a zombie.
	b.Processes[1].State = "Z"
	b.Mounts = nil
	b.Links[0].Up = false
	b.Tables = append(b.Tables, snapshots.Table{Family: "inet", Name: "CRIU-1234"})
	b.X11 = nil
	b.Ledgers = nil
	b.CRIUTmp = append(b.CRIUTmp, snapshots.File{Path: "/tmp/.criu.move_mount_set_group.y", Kind: "dir"})
	b.Sysctls = map[string]string{"net.ipv4.ip_forward": "1", "kernel.pid_max": "4194304"}
	b.Cgroups = nil
	b.Extra = []snapshots.File{{Path: "/srv/decoy/f", Kind: "file"}}

	got := diffSnapshots(a, b)
	want := []string{
		`- process 10@100 refsup state S ppid 0 argv ["refsup" "--tag" "faultwin:r1"]`,
		`+ process 10@200 refsup state S ppid 0 argv ["refsup" "--tag" "faultwin:r1"]`,
		`~ process 11@101: 11@101 sleep state S ppid 0 decoy -> 11@101 sleep state Z ppid 0 decoy`,
		`- mount /var/lib/fw/r1/root type overlay source overlay id 30 (mntns 5)`,
		`~ link dvh0: dvh0 index 7 kind veth up -> dvh0 index 7 kind veth down`,
		`+ table inet CRIU-1234`,
		`- x11 /tmp/.X11-unix/X5 (symlink -> /var/lib/fw/r1/x11/X5)`,
		`- ledger /var/lib/fw/r1/ledger.json (file)`,
		`+ criu tmp /tmp/.criu.move_mount_set_group.y (dir)`,
		`+ sysctl kernel.pid_max = "4194304"`,
		`~ sysctl net.ipv4.ip_forward: "0" -> "1"`,
		`- cgroup /sys/fs/cgroup/memory/faultwin_r1`,
		`+ extra /srv/decoy/f (file)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Diff:\n got %q\nwant %q", got, want)
	}
	// The other way round, every + becomes - and the reverse.
	back := diffSnapshots(b, a)
	if len(back) != len(want) {
		t.Errorf("diffSnapshots(b, a) has %d lines, want %d: %q", len(back), len(want), back)
	}
}

func TestDiffStackedMounts(t *testing.T) {
	m := snapshots.Mount{ID: 40, MountPoint: "/var/lib/fw/r1/x", FSType: "tmpfs", Source: "tmpfs", NS: 5}
	a := snapshots.Snapshot{Mounts: []snapshots.Mount{m}}
	m2 := m
	m2.ID = 41
	b := snapshots.Snapshot{Mounts: []snapshots.Mount{m, m2}}
	got := diffSnapshots(a, b)
	if len(got) != 1 || got[0][0] != '~' {
		t.Fatalf("stacked mount diff = %q", got)
	}
	// The same path in a foreign namespace is a different mount.
	f := m
	f.NS, f.Foreign, f.SeenVia = 9, true, 77
	got = diffSnapshots(a, snapshots.Snapshot{Mounts: []snapshots.Mount{m, f}})
	want := []string{"+ mount /var/lib/fw/r1/x type tmpfs source tmpfs id 40 (mntns 9, foreign via pid 77)"}
	if !slices.Equal(got, want) {
		t.Fatalf("foreign mount diff = %q, want %q", got, want)
	}
}
