package reclaim

import (
	"context"
	"faultwin/internal/hosttest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// leftovers makes, for real, what a described supervisor's killed run can
// leave: a process of the run, a tmpfs under its state dir, a named netns
// mount, a bridge with a veth port, a chain with a jump to it, a cgroup.
type leftovers struct {
	run, root string
	tmp       string // stands for /tmp: CRIU's ".criu.*" leftovers go here
	proc      *exec.Cmd
	netnsFile string
}

func makeLeftovers(t *testing.T) *leftovers {
	t.Helper()
	hosttest.Need(t, "makes real mounts, links, chains and cgroups")
	l := &leftovers{run: "rfwtest" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "")), root: t.TempDir()}
	state := model.StateDir(l.root, l.run)
	if err := os.MkdirAll(filepath.Join(state, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, unix.Mount("tmpfs", filepath.Join(state, "m"), "tmpfs", 0, ""))
	l.tmp = t.TempDir()
	criuTmp := filepath.Join(l.tmp, ".criu.move_mount_set_group.test")
	must(t, os.Mkdir(criuTmp, 0o700))
	must(t, unix.Mount("tmpfs", criuTmp, "tmpfs", 0, ""))
	l.proc = exec.Command("sleep", "60")
	l.proc.Env = append(os.Environ(), model.RunEnvKey+"="+l.run)
	must(t, l.proc.Start())
	t.Cleanup(func() { _ = l.proc.Process.Kill(); _ = l.proc.Wait() })

	must(t, os.MkdirAll("/run/netns", 0o755))
	l.netnsFile = "/run/netns/fwtest-" + l.run
	f, err := os.Create(l.netnsFile)
	must(t, err)
	f.Close()
	must(t, unix.Mount("/proc/self/ns/net", l.netnsFile, "", unix.MS_BIND, ""))

	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "fwtestbr0"}}
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
		for _, n := range []string{"fwtestv0", "fwtestv9", "fwtestbr0"} {
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
	roots.Links = []string{"fwtestbr*", "fwtestv*"}
	roots.Netns = []string{"/run/netns/fwtest-*"}
	roots.Chains = []string{"FWTESTCHAIN*"}
	return Plan{Scope: model.NewScope(l.root, l.run), Roots: roots, EmptyTables: []string{"ip fwtest_nat"},
		RemoveStateDir: true, Names: names}
}

func TestReclaimRemovesWhatTheRunLeft(t *testing.T) {
	l := makeLeftovers(t)
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
	if !slices.Contains(r.LinksDeleted, "fwtestv0") || !slices.Contains(r.LinksDeleted, "fwtestbr0") {
		t.Errorf("links deleted %v", r.LinksDeleted)
	}
	if _, err := netlink.LinkByName("fwtestv9"); err != nil {
		t.Errorf("a veth on no claimed bridge was deleted: %v", err)
	}
	if !slices.ContainsFunc(r.Errors, func(e string) bool { return strings.Contains(e, "fwtestv9") }) {
		t.Errorf("the veth left alone is not named: %v", r.Errors)
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
	l := makeLeftovers(t)
	deadline := time.Now().Add(5 * time.Second)
	r := Run(context.Background(), l.plan(false))
	if len(r.LinksDeleted)+len(r.ChainsDeleted)+len(r.TablesDeleted)+len(r.RulesDeleted) > 0 {
		t.Errorf("host-global names touched without Names: %+v", r)
	}
	if _, err := netlink.LinkByName("fwtestbr0"); err != nil {
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
