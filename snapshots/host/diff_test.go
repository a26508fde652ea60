// Test-only: what differs between two snapshots, for the capture tests.

package host

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"faultwin/snapshots"
)

// diffSnapshots lists, one line each, what differs from a to b: "+ " for what b has
// and a lacks, "- " for what a has and b lacks, "~ " for a thing in both
// whose recorded facts changed. Processes are matched by (pid, start time),
// so a reused pid shows as one gone and one new. The lines come in a fixed
// order (processes, mounts, links, tables, x11, ledgers, criu tmp, sysctls,
// cgroups, extra), each group sorted; equal snapshots give none.
func diffSnapshots(a, b snapshots.Snapshot) []string {
	var out []string
	out = append(out, diffKeyed("process", a.Processes, b.Processes, processKey, describeProcess)...)
	out = append(out, diffKeyed("mount", a.Mounts, b.Mounts, mountKey, describeMount)...)
	out = append(out, diffKeyed("link", a.Links, b.Links, func(l snapshots.Link) string { return l.Name }, describeLink)...)
	out = append(out, diffKeyed("table", a.Tables, b.Tables, tableKey, tableKey)...)
	out = append(out, diffKeyed("x11", a.X11, b.X11, fileKey, describeFile)...)
	out = append(out, diffKeyed("ledger", a.Ledgers, b.Ledgers, fileKey, describeFile)...)
	out = append(out, diffKeyed("criu tmp", a.CRIUTmp, b.CRIUTmp, fileKey, describeFile)...)
	out = append(out, diffSysctls(a.Sysctls, b.Sysctls)...)
	id := func(s string) string { return s }
	out = append(out, diffKeyed("cgroup", a.Cgroups, b.Cgroups, id, id)...)
	out = append(out, diffKeyed("extra", a.Extra, b.Extra, fileKey, describeFile)...)
	return out
}

// diffKeyed compares two lists of things by key. Several things with one key
// (two mounts stacked on one path) are compared as a sorted list of their
// descriptions.
func diffKeyed[T any](what string, a, b []T, key, describe func(T) string) []string {
	ga, gb := group(a, key, describe), group(b, key, describe)
	keys := slices.Sorted(maps.Keys(ga))
	for k := range gb {
		if _, ok := ga[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		da, db := ga[k], gb[k]
		switch {
		case slices.Equal(da, db):
		case len(da) == 0:
			for _, d := range db {
				out = append(out, "+ "+what+" "+d)
			}
		case len(db) == 0:
			for _, d := range da {
				out = append(out, "- "+what+" "+d)
			}
		default:
			out = append(out, fmt.Sprintf("~ %s %s: %s -> %s", what, k,
				strings.Join(da, "; "), strings.Join(db, "; ")))
		}
	}
	return out
}

func group[T any](xs []T, key, describe func(T) string) map[string][]string {
	m := make(map[string][]string, len(xs))
	for _, x := range xs {
		k := key(x)
		m[k] = append(m[k], describe(x))
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

func diffSysctls(a, b map[string]string) []string {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		va, ina := a[k]
		vb, inb := b[k]
		switch {
		case ina && inb && va == vb:
		case !ina:
			out = append(out, fmt.Sprintf("+ sysctl %s = %q", k, vb))
		case !inb:
			out = append(out, fmt.Sprintf("- sysctl %s = %q", k, va))
		default:
			out = append(out, fmt.Sprintf("~ sysctl %s: %q -> %q", k, va, vb))
		}
	}
	return out
}

func processKey(p snapshots.Process) string { return fmt.Sprintf("%d@%d", p.PID, p.StartTime) }

func describeProcess(p snapshots.Process) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d@%d %s state %s ppid %d", p.PID, p.StartTime, p.Comm, p.State, p.PPID)
	if len(p.Argv) > 0 {
		fmt.Fprintf(&b, " argv %q", p.Argv)
	}
	if p.RunEnv != "" {
		fmt.Fprintf(&b, " run_env %s", p.RunEnv)
	}
	if p.Cwd != "" {
		fmt.Fprintf(&b, " cwd %s", p.Cwd)
	}
	if p.Decoy {
		b.WriteString(" decoy")
	}
	if p.Unreadable != "" {
		fmt.Fprintf(&b, " unreadable (%s)", p.Unreadable)
	}
	return b.String()
}

func mountKey(m snapshots.Mount) string { return fmt.Sprintf("%s (mntns %d)", m.MountPoint, m.NS) }

func describeMount(m snapshots.Mount) string {
	s := fmt.Sprintf("%s type %s source %s id %d (mntns %d", m.MountPoint, m.FSType, m.Source, m.ID, m.NS)
	if m.Foreign {
		s += fmt.Sprintf(", foreign via pid %d", m.SeenVia)
	}
	s += ")"
	if m.Decoy {
		s += " decoy"
	}
	return s
}

func describeLink(l snapshots.Link) string {
	state := "down"
	if l.Up {
		state = "up"
	}
	return fmt.Sprintf("%s index %d kind %s %s", l.Name, l.Index, l.Kind, state)
}

func tableKey(t snapshots.Table) string { return t.Family + " " + t.Name }

func fileKey(f snapshots.File) string { return f.Path }

func describeFile(f snapshots.File) string {
	if f.Target != "" {
		return fmt.Sprintf("%s (%s -> %s)", f.Path, f.Kind, f.Target)
	}
	return fmt.Sprintf("%s (%s)", f.Path, f.Kind)
}
