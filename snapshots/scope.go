package snapshots

import (
	"strings"

	"faultwin/internal/model"
)

// InScope reports whether path lies where a run's things live: under the
// state root, under an extra dir, or under a CRIU leftover in the tmp dir.
func (r Roots) InScope(path string) bool {
	return model.Within(path, r.StateRoot) || model.WithinAny(path, r.Extra...) || model.InCRIUTmp(path, r.TmpDir)
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
