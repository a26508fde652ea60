package host

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"faultwin/snapshots"

	"golang.org/x/sys/unix"
)

// CRIUPath is the CRIU binary whose version rows record: the one built by
// scripts/install-criu.sh, not a distribution package.
var CRIUPath = "/opt/faultwin/criu/sbin/criu"

// Facts reads the facts a row records about the machine, with the load
// averages before the window in LoadBefore. It never fails: a fact it cannot
// read stays zero and is named in Missing, since a row without, say, a CRIU
// version is still evidence, but a silently empty one would mislead.
func Facts() snapshots.Host {
	h := snapshots.Host{Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	miss := func(what string, err error) { h.Missing = append(h.Missing, what+": "+err.Error()) }

	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	} else if k, uerr := unameRelease(); uerr == nil {
		h.Kernel = k
	} else {
		miss("kernel", err)
	}
	if v, err := CgroupVersion("/sys/fs/cgroup"); err == nil {
		h.CgroupVersion = v
	} else {
		miss("cgroup version", err)
	}
	if v, err := CRIUVersion(CRIUPath); err == nil {
		h.CRIUVersion = v
	} else {
		miss("criu version", err)
	}
	if d, err := distro("/etc/os-release"); err == nil {
		h.Distro = d
	} else {
		miss("distribution", err)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err != nil {
		miss("memory", err)
	} else if m, err := parseMemTotal(string(b)); err != nil {
		miss("memory", err)
	} else {
		h.MemBytes = m
	}
	if l, err := LoadAvg(); err == nil {
		h.LoadBefore = l
	} else {
		miss("load before", err)
	}
	return h
}

// LoadAvg reads the 1, 5 and 15 minute load averages (for Host.LoadAfter).
func LoadAvg() ([3]float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return [3]float64{}, err
	}
	return parseLoadAvg(string(b))
}

func parseLoadAvg(s string) ([3]float64, error) {
	var l [3]float64
	f := strings.Fields(s)
	if len(f) < 3 {
		return l, fmt.Errorf("loadavg %q: want three averages", s)
	}
	for i := range l {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return l, fmt.Errorf("loadavg %q: %w", s, err)
		}
		l[i] = v
	}
	return l, nil
}

func parseMemTotal(meminfo string) (uint64, error) {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", f[1], err)
			}
			if len(f) < 3 || f[2] != "kB" {
				return 0, fmt.Errorf("MemTotal %q: unit is not kB", sc.Text())
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal line")
}

// CgroupVersion says how cgroups are mounted at dir: "v2" (unified),
// "hybrid" (v1 controllers with a v2 tree at dir/unified) or "v1".
func CgroupVersion(dir string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", err
	}
	var unified int64
	var us unix.Statfs_t
	if unix.Statfs(dir+"/unified", &us) == nil {
		unified = int64(us.Type)
	}
	return cgroupKind(int64(st.Type), unified)
}

func cgroupKind(magic, unifiedMagic int64) (string, error) {
	switch {
	case magic == unix.CGROUP2_SUPER_MAGIC:
		return "v2", nil
	case magic == unix.TMPFS_MAGIC && unifiedMagic == unix.CGROUP2_SUPER_MAGIC:
		return "hybrid", nil
	case magic == unix.TMPFS_MAGIC:
		return "v1", nil
	}
	return "", fmt.Errorf("unknown file system 0x%x at the cgroup root", magic)
}

// CRIUVersion runs "criu --version" and returns the version it states.
func CRIUVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", err
	}
	return parseCRIUVersion(string(out))
}

func parseCRIUVersion(out string) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Version:"); ok {
			if v = strings.TrimSpace(v); v != "" {
				return v, nil
			}
		}
	}
	return "", fmt.Errorf("no version in %q", strings.TrimSpace(out))
}

// VersionAtLeast reports whether a dotted version ("4.2.1", "4.2") is at
// least min.
func VersionAtLeast(v string, min [3]int) (bool, error) {
	var got [3]int
	parts := strings.SplitN(v, ".", 3)
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return false, fmt.Errorf("version %q is not dotted numbers", v)
		}
		got[i] = n
	}
	for i := range got {
		if got[i] != min[i] {
			return got[i] > min[i], nil
		}
	}
	return true, nil
}

func unameRelease() (string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", err
	}
	return unix.ByteSliceToString(u.Release[:]), nil
}

// distro reads PRETTY_NAME from an os-release file.
// Equivalent to: . /etc/os-release; echo "$PRETTY_NAME".
func distro(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`), nil
		}
	}
	return "", fmt.Errorf("%s has no PRETTY_NAME", path)
}
