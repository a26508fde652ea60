package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"faultwin/internal/hosttest"

	"golang.org/x/sys/unix"
)

// imageStateDir is the host directory a test container gets as
// /var/lib/faultwin; the container's state root is its state/.
const imageStateDir = "/var/lib/faultwin/imagetest"

// TestImageRuns builds localhost/faultwin:nightly (make image, cached after
// the first time) and runs in it what a soak pod runs first: `faultwin
// doctor`, then one refsup window, W1 (a restore killed before its overlay
// mount: CRIU dump and the sweep, about a second). Both must pass, the row
// must record HEAD and a clean tree, and it must replay here. The host
// must be clean before and after.
func TestImageRuns(t *testing.T) {
	hosttest.Need(t, "builds and runs the faultwin image with podman, privileged in the host's pid namespace")
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("podman not found: sudo make deps installs it")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(cmdOutput(t, "git", "-C", repo, "rev-parse", "HEAD"))
	begin := time.Now()
	build := exec.Command(filepath.Join(repo, "deploy/image/build.sh"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make image (deploy/image/build.sh): %v\n%s", err, lastLines(out, 30))
	}
	t.Logf("make image: %.1f s", time.Since(begin).Seconds())
	if rev := strings.TrimSpace(cmdOutput(t, "podman", "image", "inspect", "--format",
		`{{index .Labels "org.opencontainers.image.revision"}}`, nightlyImageRef)); rev != head {
		t.Fatalf("%s is of commit %q, HEAD was %s when the build began (a commit landed meanwhile?)", nightlyImageRef, rev, head)
	}

	rootfs, config := flatRootfs(t)
	var nofile unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}

	if err := os.MkdirAll(imageStateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	stateRoot := filepath.Join(imageStateDir, "state")
	if out, code, _ := runVerb(t, "hostcheck", "--state-root", stateRoot); code != 0 {
		t.Fatalf("host not clean before the test (`make sweep STATE_ROOT=%s`):\n%s", stateRoot, out)
	}
	defer func() {
		if out, code, _ := runVerb(t, "hostcheck", "--state-root", stateRoot); code != 0 {
			t.Errorf("host not clean after the image ran (`make sweep STATE_ROOT=%s`):\n%s", stateRoot, out)
		}
	}()
	results := t.TempDir()

	run := func(name string, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		name = "faultwin-imagetest-" + name + "-" + strconv.Itoa(os.Getpid())
		// Each flag is one a soak pod has (deploy/kubernetes/soak-indexed-job.yaml)
		// or stands in for what a node gives a pod:
		full := []string{"run", "--rm", "--name", name,
			// namespaces, mounts, veth, nftables, cgroups, CRIU: every
			// capability, no seccomp or AppArmor (securityContext.privileged);
			"--privileged",
			// hostPID: hostcheck and the snapshots judge every process of the node;
			"--pid=host",
			// a network namespace of its own, as a pod has, without podman's
			// bridge and firewall rules on a host other windows measure;
			"--network=none",
			// podman asks for more open files than this host's hard limit
			// and runc, without CAP_SYS_RESOURCE here, cannot raise it: the
			// test's own limits (nproc as the podman windows set it);
			"--ulimit", fmt.Sprintf("nofile=%d:%d", nofile.Cur, nofile.Max), "--ulimit", "nproc=32768:32768",
			// the host's cgroup tree (a hostPath in the Job): without it refsup
			// finds no pids or freezer hierarchy for its sessions and exits
			// (measured on this hybrid host);
			"-v", "/sys/fs/cgroup:/sys/fs/cgroup",
			// the state root on the host's disk (the Job's emptyDir), so what
			// a run killed with its container leaves is where `faultwin sweep`
			// on the host finds it;
			"-v", imageStateDir + ":/var/lib/faultwin",
			"-v", results + ":/results",
		}
		full = append(append(append(full, config...), "--rootfs", rootfs), args...)
		defer exec.Command("podman", "rm", "-f", "--ignore", name).Run()
		start := time.Now()
		cmd := exec.CommandContext(ctx, "podman", full...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("podman %v: %v", full, err)
		}
		t.Logf("%s: exit %d after %.1f s", strings.Join(args, " "), code, time.Since(start).Seconds())
		return string(out), code
	}

	out, code := run("doctor", "bin/faultwin", "doctor")
	if code != 0 {
		t.Fatalf("faultwin doctor in the image: exit %d\n%s", code, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "OK ") {
			t.Errorf("doctor in the image: %s", l)
		}
	}

	out, code = run("w1", "bin/faultwin", "run", "--label-filter", "W1",
		"--results", "/results/rows.jsonl", "--logs", "/results/logs")
	if code != 0 {
		t.Fatalf("faultwin run --label-filter W1 in the image: exit %d, want 0 (PASS)\n%s", code, out)
	}
	rowsFile := filepath.Join(results, "rows.jsonl")
	rows, code, err := runVerb(t, "rows", rowsFile)
	if code != 0 {
		t.Fatalf("faultwin rows %s: %v\n%s", rowsFile, err, rows)
	}
	lines := strings.Split(strings.TrimSpace(rows), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one row (W1), got %d:\n%s\nrun output:\n%s", len(lines), rows, out)
	}
	var row struct {
		Window struct{ ID string } `json:"window"`
		Status string              `json:"status"`
		Reason string              `json:"reason"`
		Run    struct {
			Commit string `json:"commit"`
			Dirty  bool   `json:"dirty"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil {
		t.Fatal(err)
	}
	if row.Window.ID != "W1" || row.Status != "PASS" {
		t.Errorf("row: window %s %s (%s), want W1 PASS\n%s", row.Window.ID, row.Status, row.Reason, out)
	}
	if row.Run.Commit != head || row.Run.Dirty {
		t.Errorf("row: run commit %s dirty %v, want %s clean: the image's clone is HEAD", row.Run.Commit, row.Run.Dirty, head)
	}
	if out, code, _ := runVerb(t, "replay", rowsFile); code != 0 {
		t.Errorf("the image's row does not replay here: exit %d\n%s", code, out)
	}
}

func cmdOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

func lastLines(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

// imageRootfsCache holds the image's files flattened into one directory on
// the host's disk, one image at a time, named by the image's id.
const imageRootfsCache = "/var/cache/faultwin/image-rootfs"

// flatRootfs returns the image's files as a plain directory, and the run
// flags that give a container the image's own environment and working
// directory. The container runs on that directory (podman --rootfs), not on
// podman's overlay storage: refsup's sessions mount an overlay whose lower
// layer is "/", and CRIU 4.2.1 cannot dump a session whose lower layer is
// itself an overlay (measured: "Can't lookup mount=... for fd=-3
// path=/usr/bin/dash", W1 INVALID, the same image PASS on ext4). A node
// must likewise give the soak pod a root that is not overlayfs
// (docs/soak.md, "The image").
func flatRootfs(t *testing.T) (dir string, config []string) {
	t.Helper()
	id := strings.TrimSpace(cmdOutput(t, "podman", "image", "inspect", "--format", "{{.Id}}", nightlyImageRef))
	var cfg struct {
		Env        []string
		WorkingDir string
	}
	if err := json.Unmarshal([]byte(cmdOutput(t, "podman", "image", "inspect", "--format", "{{json .Config}}", nightlyImageRef)), &cfg); err != nil {
		t.Fatal(err)
	}
	for _, e := range cfg.Env {
		config = append(config, "--env", e)
	}
	config = append(config, "--workdir", cfg.WorkingDir)
	dir = filepath.Join(imageRootfsCache, id)
	if _, err := os.Stat(filepath.Join(dir, "src/faultwin/bin/faultwin")); err == nil {
		return dir, config
	}
	start := time.Now()
	if err := os.RemoveAll(imageRootfsCache); err != nil {
		t.Fatal(err)
	}
	tmp := dir + ".tmp"
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	ctr := "faultwin-imagetest-export-" + strconv.Itoa(os.Getpid())
	cmdOutput(t, "podman", "create", "--name", ctr, nightlyImageRef)
	defer exec.Command("podman", "rm", "-f", "--ignore", ctr).Run()
	export := exec.Command("podman", "export", ctr)
	untar := exec.Command("tar", "-x", "--numeric-owner", "-C", tmp)
	pipe, err := export.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	export.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := export.Run(); err != nil {
		t.Fatalf("podman export %s: %v\n%s", ctr, err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("untar of the image's files: %v\n%s", err, stderr.String())
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("image files flattened into %s in %.1f s", dir, time.Since(start).Seconds())
	return dir, config
}
