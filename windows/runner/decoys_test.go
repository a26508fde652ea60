package runner

import (
	"faultwin/drivers/reclaim"
	"faultwin/internal/hosttest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"github.com/prometheus/procfs"
)

func TestPlantAndRemove(t *testing.T) {
	hosttest.Need(t, "decoys mount a tmpfs")
	root := t.TempDir()
	p, err := Plant(root, "r1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Remove() })
	if p.Run != "r10" || p.Dir != filepath.Join(root, "r10") {
		t.Fatalf("sibling not prefix-colliding: %+v", p.Decoys)
	}
	proc, err := procfs.NewProc(p.Processes[0].PID.PID)
	if err != nil {
		t.Fatal(err)
	}
	// Start returns once the child is forked, and its argv reads empty
	// until its exec lays the new one out: read it again until then.
	var argv []string
	for deadline := time.Now().Add(2 * time.Second); len(argv) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		argv, _ = proc.CmdLine()
	}
	if !strings.Contains(strings.Join(argv, " "), "--tag faultwin:r10") {
		t.Errorf("decoy argv lacks its tag: %q", argv)
	}
	if ok, _ := mountinfo.Mounted(p.Mounts[0]); !ok {
		t.Errorf("decoy tmpfs %s not mounted", p.Mounts[0])
	}
	if !reclaim.IsPlanted(p.Dir) {
		t.Error("IsPlanted false on a planted dir")
	}
	pid := p.Processes[0].PID.PID
	if err := p.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Dir); !os.IsNotExist(err) {
		t.Errorf("decoy dir still there: %v", err)
	}
	if _, err := procfs.NewProc(pid); err == nil {
		t.Errorf("decoy process %d still alive", pid)
	}
}

func TestRemovePlantedRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ledger.json"), []byte(`{"sessions":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RemovePlanted(dir); err == nil {
		t.Fatal("removed a dir the harness did not plant")
	}
	if _, err := os.Stat(filepath.Join(dir, "ledger.json")); err != nil {
		t.Fatalf("a foreign ledger was touched: %v", err)
	}
}
