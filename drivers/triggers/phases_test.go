package triggers

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// fakeFD makes /proc/<pid>/fd/<n> a symlink to target, as the kernel shows
// an open file.
func fakeFD(t *testing.T, root string, pid, n int, target string) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(pid), "fd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, strconv.Itoa(n))); err != nil {
		t.Fatal(err)
	}
}

// restorePlan is podman's restore as its description declares it: runc's
// first CRIU only reads CRIU's version; the CRIU that restores holds the
// checkpoint directory.
var (
	restoreRoles = []Role{
		{Name: "runc", Comms: []string{"runc"}},
		{Name: "criu_any", Comms: []string{"criu"}, Parent: []string{"runc"}, Top: true},
		{Name: "criu", Comms: []string{"criu"}, Parent: []string{"runc"}, Top: true, Holds: []string{"/s/*/userdata/checkpoint"}},
	}
	restorePhases = []Phase{
		{Name: "podman_prepares"},
		{Name: "runc_started", Appeared: "runc"},
		{Name: "criu_version_check", Appeared: "criu_any"},
		{Name: "criu_reading_images", Appeared: "criu"},
		{Name: "tasks_restored", Cgroup: "/faultwin/*/libpod-*"},
		{Name: "criu_done", Gone: "criu"},
	}
)

func tick(t *testing.T, s *scanner, start time.Time) {
	t.Helper()
	if err := s.scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	s.phases(time.Now(), start)
}

func phaseNames(l *model.Landing) []string {
	var out []string
	for _, p := range l.Seen {
		out = append(out, p.Name)
	}
	return out
}

// The version-check CRIU has the working CRIU's comm and parent, but never
// holds the checkpoint directory: it is never the criu role, and a kill in
// its lifetime lands in criu_version_check, not criu_reading_images.
func TestHoldsTellsProbeFromWork(t *testing.T) {
	root := t.TempDir()
	const run = "rholds1"
	env := model.RunEnvKey + "=" + run + "\x00"
	start := time.Now()
	s, err := newScanner(root, run, model.PID{}, restoreRoles, restorePhases)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	tick(t, s, start)
	fakeProc(t, root, 10, 1, "runc", env, 500)
	fakeProc(t, root, 11, 10, "criu", env, 501) // the version check
	fakeFD(t, root, 11, 3, "/usr/lib/libnet.so")
	tick(t, s, start)
	if p := s.procs[11]; p.roles != 1<<s.roleIndex("criu_any") {
		t.Fatalf("version-check criu has roles %b, want criu_any only", p.roles)
	}
	if got := s.landing(); got.Phase != "criu_version_check" {
		t.Fatalf("landing %+v, want criu_version_check", got)
	}
	if ts := s.targets(s.roleIndex("criu")); len(ts) != 0 {
		t.Fatalf("the criu role has targets %v while only the version check runs", ts)
	}
	os.RemoveAll(filepath.Join(root, "11"))
	fakeProc(t, root, 12, 10, "criu", env, 502) // the working CRIU, before it opens the images
	tick(t, s, start)
	if ts := s.targets(s.roleIndex("criu")); len(ts) != 0 {
		t.Fatalf("working criu is the criu role before it holds the images: %v", ts)
	}
	fakeFD(t, root, 12, 4, "/s/abc/userdata/checkpoint")
	tick(t, s, start)
	ts := s.targets(s.roleIndex("criu"))
	if len(ts) != 1 || ts[0].id.PID != 12 {
		t.Fatalf("criu targets %v, want pid 12 once it holds the checkpoint directory", ts)
	}
	if ts := s.targets(s.roleIndex("criu_any")); len(ts) != 1 || ts[0].id.PID != 12 {
		t.Fatalf("criu_any targets %v: the working CRIU is every CRIU runc runs too", ts)
	}
	l := s.landing()
	if l.Phase != "criu_reading_images" {
		t.Fatalf("landing %q, want criu_reading_images", l.Phase)
	}
	if got := phaseNames(l); len(got) != 4 || got[0] != "podman_prepares" || got[3] != "criu_reading_images" {
		t.Fatalf("phases seen %v", got)
	}
	if l.Seen[3].Evidence == "" {
		t.Fatal("a phase entered without evidence")
	}

	// runc puts its CRIU into the container's cgroup, and CRIU's forks are
	// there with it: a tool there is no restored task.
	os.WriteFile(filepath.Join(root, "12", "cgroup"), []byte("3:cpu:/faultwin/"+run+"/libpod-abc\n"), 0o644)
	fakeProc(t, root, 14, 12, "criu", env, 504)
	os.WriteFile(filepath.Join(root, "14", "cgroup"), []byte("3:cpu:/faultwin/"+run+"/libpod-abc\n"), 0o644)
	tick(t, s, start)
	if got := s.landing().Phase; got != "criu_reading_images" {
		t.Fatalf("landing %q with only CRIU in the container's cgroup, want criu_reading_images", got)
	}
	// A restored task in the container's cgroup, then CRIU gone.
	fakeProc(t, root, 13, 10, "sh", env, 503)
	os.WriteFile(filepath.Join(root, "13", "cgroup"), []byte("3:cpu:/faultwin/"+run+"/libpod-abc\n"), 0o644)
	tick(t, s, start)
	if got := s.landing().Phase; got != "tasks_restored" {
		t.Fatalf("landing %q after a task joined the container's cgroup, want tasks_restored", got)
	}
	os.RemoveAll(filepath.Join(root, "12"))
	tick(t, s, start)
	if got := s.landing().Phase; got != "criu_done" {
		t.Fatalf("landing %q after the working CRIU exited, want criu_done", got)
	}
}

// A process already in the cgroup when the watch began (the container a
// checkpoint acts on) does not enter a cgroup phase; a forked child of a
// role does enter a forked phase.
func TestCgroupPhaseIgnoresInitialAndForkedPhase(t *testing.T) {
	root := t.TempDir()
	const run = "rholds2"
	env := model.RunEnvKey + "=" + run + "\x00"
	fakeProc(t, root, 20, 1, "sh", env, 600)
	os.WriteFile(filepath.Join(root, "20", "cgroup"), []byte("0::/faultwin/"+run+"/libpod-x\n"), 0o644)
	phases := []Phase{{Name: "start"}, {Name: "in_cgroup", Cgroup: "/faultwin/*/libpod-*"}, {Name: "forked", Forked: "runc"}}
	roles := []Role{{Name: "runc", Comms: []string{"runc"}}}
	start := time.Now()
	s, err := newScanner(root, run, model.PID{}, roles, phases)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	tick(t, s, start)
	tick(t, s, start)
	if got := s.landing(); got.Phase != "start" || len(got.Seen) != 1 {
		t.Fatalf("landing %+v: the container there before the watch entered a phase", got)
	}
	fakeProc(t, root, 21, 1, "runc", env, 601)
	tick(t, s, start)
	fakeProc(t, root, 22, 21, "criu", env, 602)
	tick(t, s, start)
	if got := s.landing(); got.Phase != "forked" {
		t.Fatalf("landing %+v, want forked once runc has a child", got)
	}
}

func TestCheckPhases(t *testing.T) {
	roles := map[string]int{"criu": 0}
	for _, c := range []struct {
		name string
		p    Plan
	}{
		{"unknown role", Plan{Phases: []Phase{{Name: "a", Appeared: "conmon"}}}},
		{"two kinds", Plan{Phases: []Phase{{Name: "a", Appeared: "criu", Gone: "criu"}}}},
		{"repeated", Plan{Phases: []Phase{{Name: "a"}, {Name: "a"}}}},
		{"relative cgroup", Plan{Phases: []Phase{{Name: "a", Cgroup: "faultwin/*"}}}},
		{"relative mounted", Plan{Phases: []Phase{{Name: "a", Mounted: "netns/*"}}}},
		{"cgroup and mounted", Plan{Phases: []Phase{{Name: "a", Cgroup: "/f/*", Mounted: "/n/*"}}}},
		{"watch phase unknown", Plan{Phases: []Phase{{Name: "a"}}, WatchPhase: "b"}},
	} {
		if err := checkPhases(c.p, roles); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if err := checkPhases(Plan{Phases: []Phase{{Name: "a"}, {Name: "b", Gone: "criu"}}, WatchPhase: "b"}, roles); err != nil {
		t.Errorf("a good plan refused: %v", err)
	}
}

func (s *scanner) roleIndex(name string) int {
	return slices.IndexFunc(s.roles, func(r Role) bool { return r.Name == name })
}

// A mounted phase is entered by a new mount point matching its glob, not by
// a plain file of that name (the bind target before the bind) nor by a
// mount there before the watch began.
func TestMountedPhase(t *testing.T) {
	hosttest.Need(t, "mounts tmpfs")
	dir := t.TempDir()
	old, file, mnt := filepath.Join(dir, "ns-old"), filepath.Join(dir, "ns-new"), filepath.Join(dir, "other")
	for _, d := range []string{old, file, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mount := func(p string) {
		if err := unix.Mount("tmpfs", p, "tmpfs", 0, "size=64k"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Unmount(p, unix.MNT_DETACH) })
	}
	mount(old)
	phases := []Phase{{Name: "start"}, {Name: "netns", Mounted: filepath.Join(dir, "ns-*")}}
	start := time.Now()
	s, err := newScanner("/proc", "", model.PID{PID: os.Getpid()}, nil, phases)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	tick(t, s, start)
	mount(mnt) // mounted, but not a name the glob matches
	tick(t, s, start)
	if got := s.landing(); got.Phase != "start" {
		t.Fatalf("landing %+v before any new matching mount, want start", got)
	}
	mount(file)
	tick(t, s, start)
	got := s.landing()
	if got.Phase != "netns" || got.Seen[1].Evidence != "mount point "+file+" appeared" {
		t.Fatalf("landing %+v, want netns entered by %s", got, file)
	}
}
