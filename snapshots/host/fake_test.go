package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// The tree under testdata/proc is a fake /proc: pid 100 is the harness
// ("self"), the others each test one scoping rule (see the table below).
var fakeRoots = snapshots.Roots{
	StateRoot:  "/var/lib/fwfake",
	Extra:      []string{"/srv/fwdecoy"},
	LinkPrefix: "fwsnap",
	TmpDir:     "/tmp",
	Sysctls:    []string{"net/ipv4/ip_forward", "net.ipv4.conf.all.forwarding"},
}

var fakeDecoys = snapshots.Decoys{
	Run: "r10",
	Processes: []snapshots.DecoyProcess{
		{PID: model.PID{PID: 210, StartTime: 5000}, Tag: "faultwin:r10"},
		{PID: model.PID{PID: 211, StartTime: 1}, Tag: "faultwin:r10"}, // pid 211 was reused since
	},
	Mounts: []string{"/srv/decoymnt/"},
}

func fakeProcs(t *testing.T) ([]snapshots.Process, *procScan, *incomplete) {
	t.Helper()
	inc := &incomplete{}
	ps := newProcScan("testdata/proc", fakeRoots, fakeDecoys)
	procs, err := ps.scan(context.Background(), inc)
	if err != nil {
		t.Fatal(err)
	}
	return procs, ps, inc
}

func TestFakeProcScoping(t *testing.T) {
	procs, ps, inc := fakeProcs(t)
	if len(inc.reasons) != 0 {
		t.Errorf("incomplete: %q", inc.reasons)
	}
	if ps.self != (selfNS{pid: 4026531836, mnt: 4026531841, net: 4026531840}) {
		t.Errorf("own namespaces = %+v", ps.self)
	}
	var got []int
	byPID := map[int]snapshots.Process{}
	for _, p := range procs {
		got = append(got, p.PID)
		byPID[p.PID] = p
	}
	want := []int{
		200, // argv tag faultwin:r1
		201, // FAULTWIN_RUN in environ
		202, // comm criu
		203, // open file under the state root
		204, // root under the state root; init of a foreign pid namespace
		205, // member of that namespace
		208, // zombie whose parent (200) is in scope
		210, // decoy (also tagged with the sibling run)
		213, // root under /tmp/.criu.*
		216, // environ unreadable: cannot be ruled out
		217, // cwd under an extra dir
		218, // in a run's cgroup by its v2 line alone (0::/faultwin/r1/fw1)
		219, // in a run's cgroup by v1 and v2 lines (one path)
		221, // FAULTWIN_RUN, in a neighbour's v2 cgroup
		222, // FAULTWIN_RUN, in a v2 cgroup of its own outside faultwin/
	}
	// Out: 1 (own pidns init, unreadable environ), 100 (the harness),
	// 206/207 (foreign pidns, init not in scope), 209 (zombie of pid 1),
	// 211 (reused decoy pid), 212 (/var/lib/fwfakeX: prefix, not component),
	// 214 (tag only as substring or --tag=), 215 (kernel thread named criu),
	// 220 (its v1 cgroup is /faultwin, of no run; its v2 one a neighbour's).
	if !slices.Equal(got, want) {
		t.Fatalf("pids in scope = %v, want %v", got, want)
	}

	if p := byPID[201]; p.RunEnv != "r1" {
		t.Errorf("201 RunEnv = %q", p.RunEnv)
	}
	if p := byPID[203]; !slices.Equal(p.Files, []string{"/var/lib/fwfake/r10/log"}) {
		t.Errorf("203 Files = %q", p.Files)
	}
	p := byPID[204]
	if !slices.Equal(p.NSpid, []int{204, 1}) || p.NS["pid"] != 4026532000 || p.NS["mnt"] != 4026532001 || p.NS["net"] != 4026532002 {
		t.Errorf("204 NSpid %v NS %v", p.NSpid, p.NS)
	}
	if p.StartTime != 2040 || p.PPID != 202 || p.Comm != "init" || p.State != "S" || p.Root != "/var/lib/fwfake/r1/root" {
		t.Errorf("204 = %+v", p)
	}
	z := byPID[208]
	if z.State != "Z" || !z.Zombie() || z.Unreadable != "" || len(z.Argv) != 0 || z.NS["pid"] != 4026531836 {
		t.Errorf("zombie 208 = %+v", z)
	}
	if _, ok := z.NS["mnt"]; ok {
		t.Errorf("zombie 208 has a mount namespace: %v", z.NS)
	}
	if !byPID[210].Decoy || byPID[200].Decoy {
		t.Errorf("decoy flags: 210 %v, 200 %v", byPID[210].Decoy, byPID[200].Decoy)
	}
	if u := byPID[216].Unreadable; !strings.Contains(u, "environ") {
		t.Errorf("216 Unreadable = %q", u)
	}
	if !slices.Equal(byPID[200].Argv, []string{"refsup", "--tag", "faultwin:r1"}) {
		t.Errorf("200 Argv = %q", byPID[200].Argv)
	}
}

func TestFakeMounts(t *testing.T) {
	procs, ps, _ := fakeProcs(t)
	inc := &incomplete{}
	ms := captureMounts("testdata/proc", ps.self, procs, fakeRoots, fakeDecoys, newRunFS(), inc)
	if len(inc.reasons) != 0 {
		t.Errorf("incomplete: %q", inc.reasons)
	}
	var got []string
	for _, m := range ms {
		s := m.MountPoint
		if m.Foreign {
			s += " foreign"
		}
		if m.Decoy {
			s += " decoy"
		}
		got = append(got, s)
		if !m.Foreign && m.NS != 4026531841 {
			t.Errorf("host mount %s has ns %d", m.MountPoint, m.NS)
		}
		if m.Foreign && (m.NS != 4026532001 || m.SeenVia != 204) {
			t.Errorf("foreign mount %s: ns %d via %d", m.MountPoint, m.NS, m.SeenVia)
		}
	}
	want := []string{
		"/mnt/yard",           // source in a CRIU cgroup yard
		"/srv/decoymnt decoy", // exact decoy path, outside the roots
		"/srv/fwdecoy/m",      // under an extra dir
		"/tmp/.criu.mntns.abc",
		"/var/lib/fwfake/r1/img/.criu.cgyard.xyz/cpu",
		"/var/lib/fwfake/r1/root",
		"/var/lib/fwfake/r1/secret foreign", // read once through 204, not again through 205
	}
	if !slices.Equal(got, want) {
		t.Errorf("mounts:\n got %q\nwant %q", got, want)
	}
}

func TestFakeSysctlsAndCgroups(t *testing.T) {
	inc := &incomplete{}
	sys := captureSysctls("testdata/proc", fakeRoots.Sysctls, inc)
	if len(sys) != 1 || sys["net.ipv4.ip_forward"] != "1" {
		t.Errorf("sysctls = %v", sys)
	}
	if len(inc.reasons) != 1 || !strings.HasPrefix(inc.reasons[0], "sysctl net.ipv4.conf.all.forwarding: ") {
		t.Errorf("a missing sysctl must make the snapshot incomplete: %q", inc.reasons)
	}

	inc = &incomplete{}
	cg := captureCgroups("testdata/cgroup", inc)
	want := []string{
		"testdata/cgroup/cpu/a/b/faultwin_d3",
		"testdata/cgroup/cpuset/faultwin",
		"testdata/cgroup/cpuset/faultwin/r1",
		"testdata/cgroup/cpuset/faultwin/r1/fw2",
		// nested by a runtime below depth 3, in one hierarchy only: it
		// keeps fw2 from being removed, so it must be named
		"testdata/cgroup/cpuset/faultwin/r1/fw2/5f0c",
		"testdata/cgroup/cpuset/faultwin/r1/fw2/5f0c/inner",
		"testdata/cgroup/faultwin_v2",
		"testdata/cgroup/freezer/faultwin",
		"testdata/cgroup/freezer/faultwin/r2",
		"testdata/cgroup/freezer/faultwin/r2/fw3",
		"testdata/cgroup/memory/faultwin_r1",
		"testdata/cgroup/memory/system.slice/criu-x",
		// a hybrid host's unified hierarchy is walked as a v1 one is
		"testdata/cgroup/unified/faultwin",
		"testdata/cgroup/unified/faultwin/r2",
		"testdata/cgroup/unified/faultwin/r2/fw3",
	}
	if !slices.Equal(cg, want) || len(inc.reasons) != 0 {
		t.Errorf("cgroups = %q (incomplete %q), want %q", cg, inc.reasons, want)
	}
}

func TestFakeProcMissing(t *testing.T) {
	_, err := Host{Proc: "testdata/no-such-proc"}.Capture(context.Background(), "x", fakeRoots, snapshots.Decoys{})
	if err == nil {
		t.Fatal("a capture without a readable /proc must fail")
	}
}

// statLine is a /proc/<pid>/stat of pid in state with start time start and
// flags, every other field zero.
func statLine(pid int, state string, flags, start uint64) string {
	f := make([]string, 52)
	for i := range f {
		f[i] = "0"
	}
	f[0], f[1], f[2], f[3] = strconv.Itoa(pid), "(init)", state, "1"
	f[8], f[21] = strconv.FormatUint(flags, 10), strconv.FormatUint(start, 10)
	return strings.Join(f, " ") + "\n"
}

// A foreign mount namespace whose only process exited between the process
// scan and the mountinfo read (EINVAL once a task left its namespaces) is
// as unreadable as one no process lives in: noted, not missing evidence.
// One whose process still lives but cannot be read is incomplete.
func TestMountsOfANamespaceWhoseProcessExited(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("self/mountinfo", "")
	write("300/stat", statLine(300, "Z", 0, 3000))         // a zombie now
	write("301/stat", statLine(301, "S", 0, 3010))         // alive, mountinfo unreadable
	write("302/stat", statLine(302, "S", pfExiting, 3020)) // exiting
	write("303/stat", statLine(303, "S", 0, 9999))         // pid reused since the scan
	procs := []snapshots.Process{
		{PID: 300, StartTime: 3000, NS: map[string]uint64{"mnt": 7}},
		{PID: 301, StartTime: 3010, NS: map[string]uint64{"mnt": 8}},
		{PID: 302, StartTime: 3020, NS: map[string]uint64{"mnt": 9}},
		{PID: 303, StartTime: 3030, NS: map[string]uint64{"mnt": 9}},
	}
	inc := &incomplete{}
	ms := captureMounts(root, selfNS{mnt: 1}, procs, fakeRoots, snapshots.Decoys{}, newRunFS(), inc)
	if len(ms) != 0 {
		t.Errorf("mounts %+v", ms)
	}
	if len(inc.reasons) != 1 || !strings.HasPrefix(inc.reasons[0], "mounts: mount namespace 8: ") {
		t.Errorf("incomplete %q, want only namespace 8 (its process lives)", inc.reasons)
	}
	if len(inc.notes) != 2 || !strings.Contains(inc.notes[0], "namespace 7: every in-scope process there (1) exited during the capture") ||
		!strings.Contains(inc.notes[1], "namespace 9: every in-scope process there (2) exited") {
		t.Errorf("notes %q", inc.notes)
	}
}
