package host

import (
	"context"
	"encoding/json"
	"errors"
	"faultwin/internal/hosttest"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// testBase is where the integration tests put their state roots.
const testBase = "/var/lib/faultwin-snaptest"

func needRoot(t testing.TB) {
	t.Helper()
	hosttest.Need(t, "reads every process and mounts, creates links and nft tables")
}

// env is one test's private corner of the host: base holds the state root,
// an extra dir and a tmp dir, all removed at cleanup.
type env struct {
	base  string
	roots snapshots.Roots
}

func newEnv(t *testing.T) env {
	t.Helper()
	needRoot(t)
	if err := os.MkdirAll(testBase, 0o755); err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp(testBase, "t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(base); err != nil {
			t.Errorf("removing %s: %v", base, err)
		}
		_ = os.Remove(testBase) // only when no other test still uses it
	})
	e := env{base: base, roots: snapshots.Roots{
		StateRoot:  filepath.Join(base, "state"),
		Extra:      []string{filepath.Join(base, "extra")},
		LinkPrefix: "fwsnap",
		X11Dir:     filepath.Join(base, "x11"),
		TmpDir:     filepath.Join(base, "tmp"),
		Sysctls:    []string{"net/ipv4/ip_forward"},
	}}
	for _, d := range []string{e.roots.StateRoot, e.roots.Extra[0], e.roots.X11Dir, e.roots.TmpDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// mkdir makes dir (and parents) under the env.
func (e env) mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	d := filepath.Join(parts...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// mountTmpfs mounts a small tmpfs at dir in the host mount namespace and
// unmounts it at cleanup (before the env's directories are removed).
func mountTmpfs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("fwsnap", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mounting tmpfs at %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
}

func capture(t *testing.T, roots snapshots.Roots, decoys snapshots.Decoys) snapshots.Snapshot {
	t.Helper()
	s, err := Capture(context.Background(), "test", roots, decoys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func findProc(s snapshots.Snapshot, pid int) (snapshots.Process, bool) {
	i := slices.IndexFunc(s.Processes, func(p snapshots.Process) bool { return p.PID == pid })
	if i < 0 {
		return snapshots.Process{}, false
	}
	return s.Processes[i], true
}

func TestCaptureTaggedProcess(t *testing.T) {
	e := newEnv(t)
	runDir := e.mkdir(t, e.roots.StateRoot, "fwtest1")
	tagged := startHelper(t, "sleep", []string{"--tag", "faultwin:fwtest1"}, []string{"FAULTWIN_RUN=fwtest1"}, runDir, nil)
	decoyDir := e.mkdir(t, e.roots.StateRoot, "fwtest10")
	decoy := startHelper(t, "sleep", []string{"--tag", "faultwin:fwtest10"}, nil, decoyDir, nil)
	outside := startHelper(t, "sleep", nil, nil, e.mkdir(t, e.roots.StateRoot+"X", "fwtest1"), nil)

	_, decoyStart := statOf(t, decoy.pid())
	s := capture(t, e.roots, snapshots.Decoys{Run: "fwtest10", Dir: decoyDir, Processes: []snapshots.DecoyProcess{
		{PID: model.PID{PID: decoy.pid(), StartTime: decoyStart}, Tag: "faultwin:fwtest10", Cwd: decoyDir},
	}})

	p, ok := findProc(s, tagged.pid())
	if !ok {
		t.Fatalf("tagged helper %d not captured: %+v", tagged.pid(), s.Processes)
	}
	state, start := statOf(t, tagged.pid())
	if p.StartTime != start || p.State != state || p.PPID != os.Getpid() {
		t.Errorf("identity: start %d (want %d) state %s (want %s) ppid %d (want %d)", p.StartTime, start, p.State, state, p.PPID, os.Getpid())
	}
	if want := []string{os.Args[0], "--tag", "faultwin:fwtest1"}; !slices.Equal(p.Argv, want) {
		t.Errorf("argv %q, want %q", p.Argv, want)
	}
	if p.Comm != filepath.Base(os.Args[0])[:min(15, len(filepath.Base(os.Args[0])))] {
		t.Errorf("comm %q", p.Comm)
	}
	if p.RunEnv != "fwtest1" || p.Cwd != runDir || p.Root != "/" || p.Decoy || p.Unreadable != "" {
		t.Errorf("run env %q cwd %q root %q decoy %v unreadable %q", p.RunEnv, p.Cwd, p.Root, p.Decoy, p.Unreadable)
	}
	if want := []string{filepath.Join(runDir, "fwsnap.log")}; !slices.Equal(p.Files, want) {
		t.Errorf("files %q, want %q", p.Files, want)
	}
	if p.NS["pid"] != nsOf(t, "self", "pid") || p.NS["mnt"] != nsOf(t, "self", "mnt") || p.NS["net"] != nsOf(t, "self", "net") {
		t.Errorf("namespaces %v", p.NS)
	}
	if !slices.Equal(p.NSpid, []int{tagged.pid()}) {
		t.Errorf("NSpid %v", p.NSpid)
	}

	d, ok := findProc(s, decoy.pid())
	if !ok || !d.Decoy || d.StartTime != decoyStart {
		t.Errorf("decoy %d: captured %v, %+v", decoy.pid(), ok, d)
	}
	if _, ok := findProc(s, outside.pid()); ok {
		t.Errorf("helper %d with cwd under %sX was captured", outside.pid(), e.roots.StateRoot)
	}
	if _, ok := findProc(s, os.Getpid()); ok {
		t.Error("the capturing process itself was captured")
	}
}

func TestCaptureZombie(t *testing.T) {
	e := newEnv(t)
	parent := startHelper(t, "zombie-parent", []string{"--tag", "faultwin:fwtestz"}, nil, e.roots.StateRoot, nil)
	child, err := strconv.Atoi(parent.ready[0])
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if state, _ := statOf(t, child); state == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d never became a zombie", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := capture(t, e.roots, snapshots.Decoys{})
	z, ok := findProc(s, child)
	if !ok {
		t.Fatalf("zombie %d of tagged parent %d not captured", child, parent.pid())
	}
	if z.State != "Z" || !z.Zombie() || z.PPID != parent.pid() || z.Unreadable != "" || len(z.Argv) != 0 {
		t.Errorf("zombie = %+v", z)
	}
	if _, start := statOf(t, child); z.StartTime != start {
		t.Errorf("zombie start %d, want %d", z.StartTime, start)
	}
	if _, ok := findProc(s, parent.pid()); !ok {
		t.Error("tagged parent not captured")
	}
}

func TestCaptureHostMounts(t *testing.T) {
	e := newEnv(t)
	inside := filepath.Join(e.roots.StateRoot, "fwtest2", "m")
	sibling := filepath.Join(e.roots.StateRoot+"X", "fwtest2", "m") // shares a string prefix only
	criuTmp := filepath.Join(e.roots.TmpDir, ".criu.mntns.fwsnap")
	notCRIU := filepath.Join(e.roots.TmpDir, "criu.mntns.fwsnap")
	decoy := filepath.Join(e.base, "decoymnt")
	for _, d := range []string{inside, sibling, criuTmp, notCRIU, decoy} {
		mountTmpfs(t, d)
	}
	s := capture(t, e.roots, snapshots.Decoys{Mounts: []string{decoy}})
	mnt := nsOf(t, "self", "mnt")
	got := map[string]snapshots.Mount{}
	for _, m := range s.Mounts {
		if model.Within(m.MountPoint, e.base) {
			got[m.MountPoint] = m
		}
	}
	for _, d := range []string{inside, criuTmp, decoy} {
		m, ok := got[d]
		if !ok {
			t.Errorf("mount %s not captured", d)
			continue
		}
		if m.FSType != "tmpfs" || m.Source != "fwsnap" || m.NS != mnt || m.Foreign || m.ID == 0 || m.Decoy != (d == decoy) {
			t.Errorf("mount %s = %+v", d, m)
		}
	}
	for _, d := range []string{sibling, notCRIU} {
		if _, ok := got[d]; ok {
			t.Errorf("mount %s out of scope but captured", d)
		}
	}
	if !slices.ContainsFunc(s.CRIUTmp, func(f snapshots.File) bool { return f.Path == criuTmp && f.Kind == "dir" }) {
		t.Errorf("criu tmp %s not listed: %+v", criuTmp, s.CRIUTmp)
	}
}

func TestCaptureForeignMountNamespace(t *testing.T) {
	e := newEnv(t)
	inner := filepath.Join(e.roots.StateRoot, "fwtestns", "inner")
	h := startHelper(t, "mntns", []string{"--tag", "faultwin:fwtestns", inner}, nil, "/",
		&syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID})
	s := capture(t, e.roots, snapshots.Decoys{})

	p, ok := findProc(s, h.pid())
	if !ok {
		t.Fatalf("helper %d not captured", h.pid())
	}
	if !slices.Equal(p.NSpid, []int{h.pid(), 1}) || p.NS["pid"] == nsOf(t, "self", "pid") || p.NS["mnt"] != nsOf(t, strconv.Itoa(h.pid()), "mnt") {
		t.Errorf("helper NSpid %v NS %v", p.NSpid, p.NS)
	}
	// Its untagged child lives in the same pid namespace: in scope through
	// its namespace's init.
	child := slices.IndexFunc(s.Processes, func(c snapshots.Process) bool { return c.PPID == h.pid() && c.Comm == "sleep" })
	if child < 0 {
		t.Errorf("untagged child in the helper's pid namespace not captured")
	} else if c := s.Processes[child]; len(c.NSpid) != 2 || c.NS["pid"] != p.NS["pid"] {
		t.Errorf("child %+v", c)
	}

	var foreign []snapshots.Mount
	for _, m := range s.Mounts {
		if m.MountPoint == inner {
			if !m.Foreign {
				t.Errorf("tmpfs of the helper's namespace seen in the host namespace: %+v", m)
				continue
			}
			foreign = append(foreign, m)
		}
	}
	if len(foreign) != 1 {
		t.Fatalf("foreign mounts at %s: %+v", inner, foreign)
	}
	if m := foreign[0]; m.SeenVia != h.pid() || m.NS != p.NS["mnt"] || m.FSType != "tmpfs" || m.Source != "fwsnap-inner" {
		t.Errorf("foreign mount %+v", m)
	}
}

func TestCaptureFiles(t *testing.T) {
	e := newEnv(t)
	run := e.mkdir(t, e.roots.StateRoot, "fwtest3")
	e.mkdir(t, run, "a", "b", "c")
	write := func(path string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(run, "ledger.json"))
	write(filepath.Join(run, "a", "x.ledger"))
	write(filepath.Join(run, "a", "b", "c", "ledger.json")) // depth 5: too deep
	write(filepath.Join(run, "notes.json"))

	x11Sock := filepath.Join(e.roots.X11Dir, "X7")
	l, err := net.Listen("unix", x11Sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	x11Link := filepath.Join(e.roots.X11Dir, "X8")
	if err := os.Symlink(filepath.Join(run, "x11", "X8"), x11Link); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(e.roots.TmpDir, ".X7-lock"))
	write(filepath.Join(e.roots.TmpDir, "X7-lock-not"))
	criuDir := e.mkdir(t, e.roots.TmpDir, ".criu.move_mount_set_group.fw")

	extra := e.roots.Extra[0]
	e.mkdir(t, extra, "d1", "d2")
	write(filepath.Join(extra, "f0"))
	write(filepath.Join(extra, "d1", "f1"))
	write(filepath.Join(extra, "d1", "d2", "f2")) // depth 3: not listed
	decoyFile := filepath.Join(e.base, "decoyfile")
	write(decoyFile)

	cg := filepath.Join("/sys/fs/cgroup/pids", "faultwin-snaptest-"+filepath.Base(e.base))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatalf("making cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(cg); err != nil {
			t.Errorf("removing cgroup %s: %v", cg, err)
		}
	})

	s := capture(t, e.roots, snapshots.Decoys{Files: []string{decoyFile, filepath.Join(e.base, "gone")}})

	paths := func(fs []snapshots.File) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path+" "+f.Kind+" "+f.Target)
		}
		return out
	}
	check := func(what string, got []snapshots.File, want ...string) {
		t.Helper()
		if g := paths(got); !slices.Equal(g, want) {
			t.Errorf("%s:\n got %q\nwant %q", what, g, want)
		}
	}
	check("ledgers", s.Ledgers, filepath.Join(run, "a", "x.ledger")+" file ", filepath.Join(run, "ledger.json")+" file ")
	check("x11", s.X11,
		filepath.Join(e.roots.TmpDir, ".X7-lock")+" file ",
		x11Sock+" socket ",
		x11Link+" symlink "+filepath.Join(run, "x11", "X8"))
	check("criu tmp", s.CRIUTmp, criuDir+" dir ")
	check("extra", s.Extra,
		decoyFile+" file ",
		filepath.Join(extra, "d1")+" dir ",
		filepath.Join(extra, "d1", "d2")+" dir ",
		filepath.Join(extra, "d1", "f1")+" file ",
		filepath.Join(extra, "f0")+" file ")
	if !slices.Contains(s.Cgroups, cg) {
		t.Errorf("cgroup %s not listed: %q", cg, s.Cgroups)
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Sysctls["net.ipv4.ip_forward"], strings.TrimSpace(string(b)); got != want {
		t.Errorf("sysctl net.ipv4.ip_forward = %q, want %q", got, want)
	}
}

func TestCaptureDiffAndSize(t *testing.T) {
	e := newEnv(t)
	before := capture(t, e.roots, snapshots.Decoys{})
	if len(before.Incomplete) != 0 {
		t.Errorf("incomplete on this host: %q", before.Incomplete)
	}
	m := filepath.Join(e.roots.StateRoot, "fwtest4", "root")
	mountTmpfs(t, m)
	after := capture(t, e.roots, snapshots.Decoys{})
	d := diffSnapshots(before, after)
	if !slices.ContainsFunc(d, func(l string) bool { return strings.HasPrefix(l, "+ mount "+m+" type tmpfs") }) {
		t.Errorf("diff does not show the new mount: %q", d)
	}
	b, err := json.Marshal(after)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot of a quiet host: %d bytes of JSON", len(b))
	if len(b) > 64<<10 {
		t.Errorf("snapshot is %d bytes: too big for a row", len(b))
	}
	var back snapshots.Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(after, back); len(d) != 0 {
		t.Errorf("JSON round trip changed the snapshot: %q", d)
	}
}

func TestCaptureCanceled(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Capture(ctx, "x", snapshots.DefaultRoots(testBase), snapshots.Decoys{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled capture: %v", err)
	}
}
