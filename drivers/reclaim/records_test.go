package reclaim

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"faultwin/criteria"
	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// A mount the snapshot saw but that is gone when the record is written is
// not recorded: statx of its path answers with the mount beneath it (the
// host's root filesystem here), and recording that tied every process on
// the host to the run, the harness's own shell among them.
func TestRecordSkipsAMountThatIsGone(t *testing.T) {
	hosttest.Need(t, "mounts a tmpfs and writes tie records")
	root := t.TempDir()
	roots := snapshots.DefaultRoots(root)
	sc := model.NewScope(root, "rgone")
	mp := filepath.Join(sc.StateDir, "sessions", "s1", "root")
	if err := os.MkdirAll(mp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	s, err := host.Capture(context.Background(), "test", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	var dev string
	for _, m := range s.Mounts {
		if m.MountPoint == mp {
			dev = m.Dev
		}
	}
	if dev == "" {
		t.Fatalf("the capture did not see the tmpfs at %s as a run filesystem", mp)
	}
	// The control: while the mount is there, the record names it.
	ctl := roots
	ctl.Records = t.TempDir()
	if _, err := Record(ctl, sc, s); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ctl.Records, sc.Run+".json")); err != nil || !strings.Contains(string(b), `"mount_point": "`+mp+`"`) {
		t.Fatalf("with the mount there, the record does not name it (%v):\n%s", err, b)
	}
	if err := unix.Unmount(mp, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Record(roots, sc, s); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(roots.Records, sc.Run+".json")); err == nil {
		t.Fatalf("a record names a mount that is gone:\n%s", b)
	}
}

// A record that names a mount the harness's table shows outside the state
// root (a hand-edited or wrong one: the root filesystem's) ties nothing,
// and the capture says why.
func TestCaptureRefusesARecordOfAHostMount(t *testing.T) {
	hosttest.Need(t, "reads the whole host")
	root := t.TempDir()
	roots := snapshots.DefaultRoots(root)
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, "/", 0, unix.STATX_MNT_ID_UNIQUE, &st); err != nil || st.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
		t.Fatalf("statx /: %v", err)
	}
	dev := strconv.Itoa(int(st.Dev_major)) + ":" + strconv.Itoa(int(st.Dev_minor))
	if _, err := writeRecord(roots.Records, snapshots.TieRecord{Run: "rwrong", Mounts: []snapshots.RecordedMount{{ID: st.Mnt_id, Dev: dev, MountPoint: filepath.Join(root, "rwrong", "x")}}}); err != nil {
		t.Fatal(err)
	}
	s, err := host.Capture(context.Background(), "test", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	if left := criteria.Leftovers(s, roots); len(left) > 0 {
		t.Fatalf("a record of the root filesystem's mount tied host processes:\n%s", strings.Join(left, "\n"))
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "outside the state root: not used") {
		t.Errorf("the capture does not say it refused the record: %q", s.Notes)
	}
}
