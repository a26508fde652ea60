package criteria

import (
	"fmt"
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// maxArgv bounds how much of a command line goes into one evidence line.
const maxArgv = 120

// procLine names a process the way every evidence line does:
// pid 4242 (start 99812) criu argv="criu swrk 3" cwd=/var/lib/faultwin/r1/c1
func procLine(p snapshots.Process) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d (start %d) %s", p.PID, p.StartTime, p.Comm)
	if p.Zombie() {
		fmt.Fprintf(&b, " state=%s", p.State)
		if p.Exiting {
			b.WriteString(" (exiting)")
		}
	}
	if len(p.Argv) > 0 {
		a := strings.Join(p.Argv, " ")
		if len(a) > maxArgv {
			a = a[:maxArgv] + "..."
		}
		fmt.Fprintf(&b, " argv=%q", a)
	}
	if p.Cwd != "" {
		fmt.Fprintf(&b, " cwd=%s", p.Cwd)
	}
	return b.String()
}

// pidLine names a process by identity only (sweep reports, decoys).
func pidLine(id model.PID) string {
	return fmt.Sprintf("pid %d (start %d)", id.PID, id.StartTime)
}

// mountLine names a mount with its type and, for a mount seen only inside
// another mount namespace, where it was seen.
func mountLine(m snapshots.Mount) string {
	s := "mount " + m.MountPoint + " (" + m.FSType
	if m.Foreign {
		s += ", ns " + strconv.FormatUint(m.NS, 10)
		if m.SeenVia != 0 {
			s += " via pid " + strconv.Itoa(m.SeenVia)
		}
	}
	return s + ")"
}

// fileLine names a file of a snapshot with its kind and symlink target.
func fileLine(what string, f snapshots.File) string {
	s := what + " " + f.Path
	if f.Kind != "" {
		s += " (" + f.Kind + ")"
	}
	if f.Target != "" {
		s += " -> " + f.Target
	}
	return s
}

func tableLine(t snapshots.Table) string {
	s := "table " + strings.TrimSpace(t.Family+" "+t.Name)
	if t.Netns != "" {
		s += " (" + t.Netns + ")"
	}
	return s
}

func linkLine(l snapshots.Link) string {
	s := "link " + l.Name
	if l.Kind != "" {
		s += " (" + l.Kind + ")"
	}
	return s
}

// labels renders the snapshots a finding was seen in: "(in after_sweep2)".
func labels(ls []string) string {
	return "(in " + strings.Join(ls, ", ") + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
