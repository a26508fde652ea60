package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"faultwin/snapshots/host"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func checkRoot(context.Context, Config) Check {
	c := Check{Name: "root", Fix: "run as root (sudo)"}
	c.OK = os.Geteuid() == 0
	c.Detail = fmt.Sprintf("euid %d", os.Geteuid())
	return c
}

// minKernel is the oldest kernel CRIU 4.2 and the refsup session layout were
// exercised on with namespaces, overlayfs upper on tmpfs and nftables.
var minKernel = [2]int{5, 10}

func checkKernel(context.Context, Config) Check {
	c := Check{Name: "kernel", Fix: fmt.Sprintf("boot Linux >= %d.%d", minKernel[0], minKernel[1])}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		c.Detail = err.Error()
		return c
	}
	rel := unix.ByteSliceToString(u.Release[:])
	c.Detail = rel
	m := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(rel)
	if m == nil {
		c.Detail += ": cannot parse the version"
		return c
	}
	maj, _ := strconv.Atoi(m[1])
	mnr, _ := strconv.Atoi(m[2])
	c.OK = maj > minKernel[0] || (maj == minKernel[0] && mnr >= minKernel[1])
	return c
}

func checkCgroup(context.Context, Config) Check {
	c := Check{Name: "cgroup", Fix: "mount cgroup v1 controllers or cgroup2 at /sys/fs/cgroup"}
	v, err := host.CgroupVersion("/sys/fs/cgroup")
	if err != nil {
		c.Detail = "/sys/fs/cgroup: " + err.Error()
		return c
	}
	c.OK, c.Detail = true, v
	return c
}

func checkOverlay(context.Context, Config) Check {
	c := Check{Name: "overlayfs", Fix: "modprobe overlay"}
	dir, err := os.MkdirTemp("", "faultwin-doctor-")
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	defer os.RemoveAll(dir)
	if err := unix.Mount("faultwin-doctor", dir, "tmpfs", 0, "size=1m"); err != nil {
		c.Detail = "tmpfs: " + err.Error()
		return c
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			c.Detail = err.Error()
			return c
		}
	}
	merged := filepath.Join(dir, "merged")
	opts := fmt.Sprintf("lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", dir, dir, dir)
	if err := unix.Mount("faultwin-doctor", merged, "overlay", 0, opts); err != nil {
		c.Detail = "mount overlay: " + err.Error()
		return c
	}
	if err := unix.Unmount(merged, 0); err != nil {
		c.Detail = "unmount overlay: " + err.Error()
		return c
	}
	c.OK, c.Detail = true, "mounted and unmounted an overlay over a tmpfs upper"
	return c
}

// checkNamespaces starts /bin/true in each namespace kind refsup uses.
func checkNamespaces(ctx context.Context, _ Config) Check {
	c := Check{Name: "namespaces", Fix: "enable CONFIG_{PID,NET,UTS,IPC}_NS and user permission to unshare (root)"}
	kinds := []struct {
		name string
		flag uintptr
	}{{"pid", unix.CLONE_NEWPID}, {"mnt", unix.CLONE_NEWNS}, {"net", unix.CLONE_NEWNET},
		{"uts", unix.CLONE_NEWUTS}, {"ipc", unix.CLONE_NEWIPC}}
	var ok, bad []string
	for _, k := range kinds {
		cmd := exec.CommandContext(ctx, "/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: k.flag}
		if err := cmd.Run(); err != nil {
			bad = append(bad, k.name+": "+err.Error())
			continue
		}
		ok = append(ok, k.name)
	}
	c.OK = len(bad) == 0
	c.Detail = strings.Join(ok, " ")
	if !c.OK {
		c.Detail = strings.Join(bad, "; ")
	}
	return c
}

// inScratchNetns runs f with a handle on a brand-new network namespace that
// vanishes, with everything made in it, when f returns.
func inScratchNetns(f func(ns netns.NsHandle) error) error {
	// netns.New moves the calling thread; it must not be handed back to the
	// scheduler until it is home again. If going home fails the thread stays
	// locked and Go destroys it when the goroutine ends.
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("reading own netns: %w", err)
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("new netns: %w", err)
	}
	defer ns.Close()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("returning to own netns: %w", err)
	}
	runtime.UnlockOSThread()
	return f(ns)
}

func checkVeth(context.Context, Config) Check {
	c := Check{Name: "veth", Fix: "modprobe veth"}
	err := inScratchNetns(func(ns netns.NsHandle) error {
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			return err
		}
		defer h.Close()
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "fwdoctor0"}, PeerName: "fwdoctor1"}
		if err := h.LinkAdd(v); err != nil {
			return fmt.Errorf("adding veth: %w", err)
		}
		return h.LinkDel(v)
	})
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	c.OK, c.Detail = true, "made and deleted a veth pair in a scratch netns"
	return c
}

func checkNftables(context.Context, Config) Check {
	c := Check{Name: "nftables (netlink)", Fix: "modprobe nf_tables; " + Fix}
	err := inScratchNetns(func(ns netns.NsHandle) error {
		conn, err := nftables.New(nftables.WithNetNSFd(int(ns)))
		if err != nil {
			return err
		}
		t := conn.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: "faultwin_doctor"})
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("adding table: %w", err)
		}
		tables, err := conn.ListTables()
		if err != nil {
			return fmt.Errorf("listing tables: %w", err)
		}
		if len(tables) != 1 || tables[0].Name != t.Name {
			return fmt.Errorf("table written but not listed back (%d tables)", len(tables))
		}
		conn.DelTable(t)
		return conn.Flush()
	})
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	c.OK, c.Detail = true, "wrote, listed and deleted a table in a scratch netns"
	return c
}

// MinCRIU is the oldest CRIU that dumps and restores on this kernel.
var MinCRIU = [3]int{4, 2, 0}

func checkCRIU(ctx context.Context, cfg Config) Check {
	c := Check{Name: "criu >= 4.2", Fix: Fix + " (builds CRIU 4.2.1 into /opt/faultwin/criu)"}
	if !filepath.IsAbs(cfg.CRIU) {
		c.Detail = fmt.Sprintf("criu path %q is not absolute", cfg.CRIU)
		return c
	}
	raw, err := host.CRIUVersion(cfg.CRIU)
	if err != nil {
		c.Detail = cfg.CRIU + " --version: " + err.Error()
		return c
	}
	c.Detail = raw + " at " + cfg.CRIU
	ok, err := host.VersionAtLeast(raw, MinCRIU)
	if err != nil {
		c.Detail += ": " + err.Error()
		return c
	}
	c.OK = ok
	if !c.OK {
		c.Detail += fmt.Sprintf(": older than %d.%d", MinCRIU[0], MinCRIU[1])
	}
	return c
}

func checkCRIUCheck(ctx context.Context, cfg Config) Check {
	c := Check{Name: "criu check", Fix: Fix}
	if _, err := os.Stat(cfg.CRIU); err != nil {
		c.Detail = err.Error()
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cfg.CRIU, "--no-default-config", "check").CombinedOutput()
	last := lastLine(out)
	if err != nil {
		c.Detail = fmt.Sprintf("%v: %s", err, last)
		return c
	}
	c.OK, c.Detail = true, last
	return c
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func checkTool(cfg Config, bin, pkg string) Check {
	c := Check{Name: bin, Fix: Fix + " (Debian package " + pkg + ")"}
	p, err := lookPath(cfg.Path, bin)
	if err != nil {
		c.Detail = "not found on PATH"
		return c
	}
	c.OK, c.Detail = true, p
	return c
}

// lookPath is exec.LookPath over an explicit PATH, so tests can hide a tool.
func lookPath(path, bin string) (string, error) {
	if path == "" {
		return exec.LookPath(bin)
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, bin)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
