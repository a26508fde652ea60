package reclaim

import (
	"context"
	"faultwin/internal/hosttest"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// leftovers makes, for real, what a described supervisor's killed run can
// leave: a process of the run, a tmpfs under its state dir, a named netns
// mount, a bridge with a veth port, a chain with a jump to it, a cgroup.
type leftovers struct {
	run, root string
	tmp       string // stands for /tmp: CRIU's ".criu.*" leftovers go here
	proc      *exec.Cmd
	netnsFile string
	bridge    string // named for the run, as a described run's network is
}

// makeLeftovers plants a run's leftovers beside a user's: a bridge named
// like podman's default with a veth port and a netns of the user's, made
// before the run, and a plain veth pair made during it. The run's
// host-global objects are claimed (Claim) against a preflight taken
// before the run made them, as a window claims them.
func makeLeftovers(t *testing.T, run string) *leftovers {
	t.Helper()
	hosttest.Need(t, "makes real mounts, links, chains and cgroups")
	l := &leftovers{run: run, root: t.TempDir(), bridge: "fw" + run}
	l.tmp = t.TempDir()
	userLinks(t)
	pre, err := host.Capture(context.Background(), "preflight", l.plan(true).Roots, snapshots.Decoys{})
	must(t, err)
	state := model.StateDir(l.root, l.run)
	if err := os.MkdirAll(filepath.Join(state, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, unix.Mount("tmpfs", filepath.Join(state, "m"), "tmpfs", 0, ""))
	criuTmp := filepath.Join(l.tmp, ".criu.move_mount_set_group.test")
	must(t, os.Mkdir(criuTmp, 0o700))
	must(t, unix.Mount("tmpfs", criuTmp, "tmpfs", 0, ""))
	// The run's process in a network namespace of its own, which a named
	// netns pins: as a container's, made during the run.
	l.proc = exec.Command("sleep", "60")
	l.proc.Env = append(os.Environ(), model.RunEnvKey+"="+l.run)
	l.proc.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	must(t, l.proc.Start())
	t.Cleanup(func() { _ = l.proc.Process.Kill(); _ = l.proc.Wait() })

	must(t, os.MkdirAll("/run/netns", 0o755))
	l.netnsFile = "/run/netns/fwtest-" + l.run
	f, err := os.Create(l.netnsFile)
	must(t, err)
	f.Close()
	must(t, unix.Mount(fmt.Sprintf("/proc/%d/ns/net", l.proc.Process.Pid), l.netnsFile, "", unix.MS_BIND, ""))

	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: l.bridge}}
	must(t, netlink.LinkAdd(br))
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "fwtestv0", MasterIndex: 0}, PeerName: "fwtestp0"}
	must(t, netlink.LinkAdd(veth))
	v, err := netlink.LinkByName("fwtestv0")
	must(t, err)
	must(t, netlink.LinkSetMaster(v, br))
	// A veth of someone else, matching the glob but on no claimed bridge.
	must(t, netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "fwtestv9"}, PeerName: "fwtestp9"}))

	c, err := nftables.New()
	must(t, err)
	tbl := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: "fwtest_nat"})
	base := c.AddChain(&nftables.Chain{Name: "POSTROUTING", Table: tbl, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource})
	c.AddChain(&nftables.Chain{Name: "FWTESTCHAIN-1", Table: tbl})
	c.AddRule(&nftables.Rule{Table: tbl, Chain: base, Exprs: []expr.Any{&expr.Verdict{Kind: expr.VerdictJump, Chain: "FWTESTCHAIN-1"}}})
	must(t, c.Flush())

	after, err := host.Capture(context.Background(), "after_death", l.plan(true).Roots, snapshots.Decoys{})
	must(t, err)
	_, err = Claim(l.plan(true).Roots, l.plan(true).Scope, pre, after)
	must(t, err)

	cg := "/sys/fs/cgroup/pids/faultwin/" + l.run + "/libpod-x"
	if _, err := os.Stat("/sys/fs/cgroup/pids"); err != nil {
		cg = "/sys/fs/cgroup/faultwin/" + l.run + "/libpod-x"
	}
	must(t, os.MkdirAll(cg, 0o755))

	t.Cleanup(func() {
		_ = unix.Unmount(filepath.Join(state, "m"), unix.MNT_DETACH)
		_ = unix.Unmount(criuTmp, unix.MNT_DETACH)
		_ = unix.Unmount(l.netnsFile, unix.MNT_DETACH)
		_ = os.Remove(l.netnsFile)
		for _, n := range []string{"fwtestv0", "fwtestv9", l.bridge} {
			if k, err := netlink.LinkByName(n); err == nil {
				_ = netlink.LinkDel(k)
			}
		}
		if c, err := nftables.New(); err == nil {
			c.DelTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: "fwtest_nat"})
			_ = c.Flush()
		}
		_ = os.Remove(cg)
		_ = os.Remove(filepath.Dir(cg))
	})
	return l
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (l *leftovers) plan(names bool) Plan {
	roots := snapshots.DefaultRoots(l.root)
	roots.TmpDir = l.tmp
	roots.Links = []string{"fw*", "fwtestv*", "fwtestuser*"}
	roots.Netns = []string{"/run/netns/fwtest-*"}
	roots.Chains = []string{"FWTESTCHAIN*"}
	return Plan{Scope: model.NewScope(l.root, l.run), Roots: roots, EmptyTables: []string{"ip fwtest_nat"},
		RemoveStateDir: true, Names: names}
}

// userLinks makes what a user of the host had before the run: a bridge
// with a port, both under names the description's globs match. Nothing
// of the run's may ever touch them.
func userLinks(t *testing.T) {
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "fwtestuser0"}}
	must(t, netlink.LinkAdd(br))
	must(t, netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "fwtestuser1"}, PeerName: "fwtestuser2"}))
	v, err := netlink.LinkByName("fwtestuser1")
	must(t, err)
	must(t, netlink.LinkSetMaster(v, br))
	t.Cleanup(func() {
		for _, n := range []string{"fwtestuser1", "fwtestuser0"} {
			if k, err := netlink.LinkByName(n); err == nil {
				_ = netlink.LinkDel(k)
			}
		}
	})
}

// userLinksIntact fails when a link of the user's is gone or changed.
func userLinksIntact(t *testing.T) {
	t.Helper()
	for _, n := range []string{"fwtestuser0", "fwtestuser1", "fwtestuser2"} {
		if _, err := netlink.LinkByName(n); err != nil {
			t.Errorf("the user's link %s was touched: %v", n, err)
		}
	}
}

func TestReclaimRemovesWhatTheRunLeft(t *testing.T) {
	l := makeLeftovers(t, "rfwt1")
	r := Run(context.Background(), l.plan(true))
	if !slices.ContainsFunc(r.Killed, func(k model.Killed) bool { return k.PID.PID == l.proc.Process.Pid }) {
		t.Errorf("the run's process was not killed: %+v", r.Killed)
	}
	_ = l.proc.Wait()
	if ws, ok := l.proc.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the run's process ended with %v", l.proc.ProcessState)
	}
	for what, got := range map[string][]string{
		"unmounted":       r.Unmounted,
		"files removed":   r.FilesRemoved,
		"links deleted":   r.LinksDeleted,
		"chains deleted":  r.ChainsDeleted,
		"rules deleted":   r.RulesDeleted,
		"tables deleted":  r.TablesDeleted,
		"cgroups removed": r.CgroupsRemoved,
	} {
		if len(got) == 0 {
			t.Errorf("%s: nothing", what)
		}
	}
	if !slices.Contains(r.LinksDeleted, "fwtestv0") || !slices.Contains(r.LinksDeleted, l.bridge) {
		t.Errorf("links deleted %v", r.LinksDeleted)
	}
	if _, err := netlink.LinkByName("fwtestv9"); err != nil {
		t.Errorf("a veth on no claimed bridge was deleted: %v", err)
	}
	userLinksIntact(t)
	// What the judge names as someone else's after the last resort: the
	// user's links, never as leftovers.
	j, err := Judge(context.Background(), "test", l.plan(true).Roots)
	must(t, err)
	if len(j.Left) > 0 {
		t.Errorf("after the last resort the judge finds %q", j.Left)
	}
	if alone := criteria.NotFaultwins(j.Snapshot, l.plan(true).Roots); !slices.Contains(alone, "link fwtestuser0 (bridge)") || !slices.Contains(alone, "link fwtestv9 (veth)") {
		t.Errorf("not named as left alone: %q", alone)
	}
	if _, err := os.Stat(l.netnsFile); !os.IsNotExist(err) {
		t.Errorf("netns file still there: %v", err)
	}
	if _, err := os.Stat(model.StateDir(l.root, l.run)); !os.IsNotExist(err) {
		t.Errorf("state dir still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(l.tmp, ".criu.move_mount_set_group.test")); !os.IsNotExist(err) {
		t.Errorf("CRIU's tmp leftover still there: %v", err)
	}
	if !slices.Contains(r.TablesDeleted, "ip fwtest_nat") {
		t.Errorf("emptied table not deleted: %v", r.TablesDeleted)
	}
}

func TestReclaimWithoutNamesLeavesHostGlobalNames(t *testing.T) {
	l := makeLeftovers(t, "rfwt2")
	deadline := time.Now().Add(5 * time.Second)
	r := Run(context.Background(), l.plan(false))
	if len(r.LinksDeleted)+len(r.ChainsDeleted)+len(r.TablesDeleted)+len(r.RulesDeleted) > 0 {
		t.Errorf("host-global names touched without Names: %+v", r)
	}
	if _, err := netlink.LinkByName(l.bridge); err != nil {
		t.Errorf("bridge gone: %v", err)
	}
	if _, err := os.Stat(l.netnsFile); err != nil {
		t.Errorf("netns file gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(l.tmp, ".criu.move_mount_set_group.test")); err != nil {
		t.Errorf("CRIU tmp leftover removed without Names: %v", err)
	}
	if len(r.Killed) == 0 || len(r.CgroupsRemoved) == 0 || time.Now().After(deadline) {
		t.Errorf("the run's own things were not reclaimed: %+v", r)
	}
}
