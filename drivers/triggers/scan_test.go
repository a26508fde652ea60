package triggers

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"faultwin/internal/model"
)

// fakeProc writes the files the scanner reads for one pid under root.
func fakeProc(t *testing.T, root string, pid, ppid int, comm, environ string, start int) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := strconv.Itoa(pid) + " (" + comm + ") S " + strconv.Itoa(ppid) +
		" 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + strconv.Itoa(start) + " 0 0\n"
	for name, data := range map[string]string{"stat": stat, "comm": comm + "\n", "environ": environ, "cgroup": "0::/\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A process caught mid-exec shows its new comm and an empty environ (the
// kernel sets the comm before it lays out the new environment). Its marks
// are read again on the next tick, so runc's criu is not lost to that
// instant: the race made a real runc-and-criu test miss its criu once.
func TestMidExecEnvironReadAgain(t *testing.T) {
	root := t.TempDir()
	const run = "rmidexec1"
	env := model.RunEnvKey + "=" + run + "\x00"
	fakeProc(t, root, 99, 1, "runc", env, 500)
	fakeProc(t, root, 100, 99, "criu", "", 501)
	s, err := newScanner(root, run, model.PID{}, []Role{{Name: "criu", Comms: []string{"criu"}, Parent: []string{"runc"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	if p := s.procs[100]; p == nil || p.member || !p.retag {
		t.Fatalf("mid-exec criu after tick 1: %+v, want not yet a member, to be read again", p)
	}
	if len(s.appeared) != 0 {
		t.Fatalf("appeared %+v before its environment was readable", s.appeared)
	}
	if err := os.WriteFile(filepath.Join(root, "100", "environ"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	if len(s.appeared) != 1 || s.appeared[0].PID != (model.PID{PID: 100, StartTime: 501}) {
		t.Fatalf("appeared %+v, want runc's criu once its environment is readable", s.appeared)
	}
}
