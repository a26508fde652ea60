package snapshots

import (
	"path/filepath"
	"strings"
)

// TagPrefix starts the argv element that names a process's run:
// "--tag faultwin:<run>" puts "faultwin:<run>" in argv.
const TagPrefix = "faultwin:"

// RunEnvKey is the environment variable every process of a run carries.
const RunEnvKey = "FAULTWIN_RUN"

// CRIUTmpPrefix starts the names CRIU gives its leftovers in the temporary
// directory (".criu.mntns.*", ".criu.move_mount_set_group.*").
const CRIUTmpPrefix = ".criu."

// CgyardMarker is part of every cgroup yard CRIU mounts for a restore
// ("<image dir>/.criu.cgyard.*/<controller>").
const CgyardMarker = ".criu.cgyard."

// Under reports whether path is root or lies inside it, comparing whole path
// components after cleaning both: "/a/r1/x" is under "/a/r1", "/a/r10" is
// not. An empty path or root is never under anything.
func Under(path, root string) bool {
	if path == "" || root == "" {
		return false
	}
	p, r := filepath.Clean(path), filepath.Clean(root)
	if p == r {
		return true
	}
	if r == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, r+"/")
}

// UnderAny reports whether path is under at least one of roots.
func UnderAny(path string, roots ...string) bool {
	for _, r := range roots {
		if Under(path, r) {
			return true
		}
	}
	return false
}

// UnderCRIUTmp reports whether path is a CRIU leftover in tmp or inside one:
// its first component below tmp starts with ".criu.".
func UnderCRIUTmp(path, tmp string) bool {
	if path == "" || tmp == "" {
		return false
	}
	p, t := filepath.Clean(path), filepath.Clean(tmp)
	var rest string
	switch {
	case t == "/" && strings.HasPrefix(p, "/"):
		rest = p[1:]
	case strings.HasPrefix(p, t+"/"):
		rest = p[len(t)+1:]
	default:
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	return strings.HasPrefix(first, CRIUTmpPrefix)
}

// InScope reports whether path lies where a run's things live: under the
// state root, under an extra dir, or under a CRIU leftover in the tmp dir.
func (r Roots) InScope(path string) bool {
	return Under(path, r.StateRoot) || UnderAny(path, r.Extra...) || UnderCRIUTmp(path, r.TmpDir)
}

// SysctlKey turns a sysctl name as Roots spells it ("net/ipv4/ip_forward")
// into the key Snapshot.Sysctls uses, the sysctl(8) form
// ("net.ipv4.ip_forward"). A name already in dotted form is returned as is.
func SysctlKey(name string) string {
	return strings.ReplaceAll(strings.Trim(name, "/"), "/", ".")
}

// SysctlPath turns a sysctl name in either form into its path below
// /proc/sys. A dotted name is read as sysctl(8) does, so an interface name
// with a dot in it must be given in the slash form.
func SysctlPath(name string) string {
	if strings.Contains(name, "/") {
		return strings.Trim(name, "/")
	}
	return strings.ReplaceAll(name, ".", "/")
}
