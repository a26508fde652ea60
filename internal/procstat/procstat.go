// Package procstat is the harness's one parser of /proc/<pid>/stat, for the
// readers that poll it at a rate the general procfs reader is too slow for
// (the fault triggers) and for those that need one field (a start time, a
// state). It reads under any proc root, so its users' tests can point it at
// a fake tree. snapshots/host reads processes through prometheus/procfs.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Stat is what the harness reads of /proc/<pid>/stat.
type Stat struct {
	Comm      string // between the first "(" and the last ")": a comm may hold both
	State     byte   // 'R', 'S', 'D', 'Z', ...
	PPID      int
	Flags     uint64 // PF_* (field 9)
	StartTime uint64 // clock ticks after boot (field 22)
	// CPU time in clock ticks (USER_HZ): its own in user and kernel mode,
	// every thread's (fields 14, 15), and its waited-for children's
	// (fields 16, 17).
	UTime, STime, CUTime, CSTime uint64
}

// CPUTicks is the CPU time the process and its reaped children used.
func (s Stat) CPUTicks() uint64 { return s.UTime + s.STime + s.CUTime + s.CSTime }

// Zombie reports whether the process has exited and waits to be reaped.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// Parse reads one stat line. Fields are counted from the last ")", since
// the comm before it may hold spaces and parentheses.
func Parse(b []byte) (Stat, error) {
	var st Stat
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return st, fmt.Errorf("malformed stat %q", b)
	}
	st.Comm = string(b[open+1 : end])
	rest := b[end+1:]
	// after ')': state(3) ppid(4) pgrp session tty tpgid flags(9) ... utime(14)
	// stime cutime cstime(17) ... starttime(22)
	for field := 3; field <= 22; field++ {
		rest = bytes.TrimLeft(rest, " ")
		tok := rest
		if i := bytes.IndexByte(rest, ' '); i >= 0 {
			tok, rest = rest[:i], rest[i:]
		} else {
			rest = nil
		}
		tok = bytes.TrimRight(tok, "\n")
		if len(tok) == 0 {
			return st, fmt.Errorf("short stat %q", b)
		}
		switch field {
		case 3:
			st.State = tok[0]
		case 4:
			v, err := strconv.Atoi(string(tok))
			if err != nil {
				return st, fmt.Errorf("stat ppid: %w", err)
			}
			st.PPID = v
		case 9, 14, 15, 16, 17, 22:
			v, err := strconv.ParseUint(string(tok), 10, 64)
			if err != nil {
				return st, fmt.Errorf("stat field %d: %w", field, err)
			}
			switch field {
			case 9:
				st.Flags = v
			case 14:
				st.UTime = v
			case 15:
				st.STime = v
			case 16:
				st.CUTime = v
			case 17:
				st.CSTime = v
			default:
				st.StartTime = v
			}
		}
	}
	return st, nil
}

// Read reads pid's stat under the proc root ("" is /proc).
// Equivalent to: cat /proc/<pid>/stat.
func Read(root string, pid int) (Stat, error) {
	if root == "" {
		root = "/proc"
	}
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return Stat{}, err
	}
	st, err := Parse(b)
	if err != nil {
		return st, fmt.Errorf("%s/%d/stat: %w", root, pid, err)
	}
	return st, nil
}
