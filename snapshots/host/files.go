package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// ledgerDepth bounds the search for ledger files below the state root:
// <root>/<run>/ledger.json is at depth 2, one level of nesting more is
// allowed. Session roots (overlays of the whole host) sit deeper and are
// never walked.
const ledgerDepth = 3

// extraDepth bounds the listing of each Roots.Extra dir.
const extraDepth = 2

// captureTmp lists the X11 sockets and links of roots.X11Dir with the
// X server lock files of roots.TmpDir, and CRIU's leftovers in
// roots.TmpDir, each sorted by path.
// Equivalent to: ls -la /tmp/.X11-unix /tmp/.X*-lock /tmp/.criu.*.
func captureTmp(roots snapshots.Roots, inc *incomplete) (x11, criu []snapshots.File) {
	x11, criu = []snapshots.File{}, []snapshots.File{}
	if roots.X11Dir != "" {
		ents, err := readDir(roots.X11Dir)
		if err != nil {
			inc.add("x11: %v", err)
		}
		for _, e := range ents {
			x11 = append(x11, fileOf(filepath.Join(roots.X11Dir, e.Name()), e.Type()))
		}
	}
	if roots.TmpDir != "" {
		ents, err := readDir(roots.TmpDir)
		if err != nil {
			inc.add("tmp: %v", err)
		}
		for _, e := range ents {
			name := e.Name()
			path := filepath.Join(roots.TmpDir, name)
			switch {
			case strings.HasPrefix(name, ".X") && strings.HasSuffix(name, "-lock"):
				x11 = append(x11, fileOf(path, e.Type()))
			case strings.HasPrefix(name, model.CRIUTmpPrefix):
				criu = append(criu, fileOf(path, e.Type()))
			}
		}
	}
	sortFiles(x11)
	sortFiles(criu)
	return x11, criu
}

// captureLedgers finds the ledger files (ledger.json or *.ledger) up to
// ledgerDepth below the state root, sorted by path.
// Equivalent to: find <root> -maxdepth 3 \( -name ledger.json -o -name '*.ledger' \).
func captureLedgers(stateRoot string, inc *incomplete) []snapshots.File {
	out := []snapshots.File{}
	if stateRoot == "" {
		return out
	}
	walk(stateRoot, ledgerDepth, inc, "ledgers", func(path string, t fs.FileMode) {
		name := filepath.Base(path)
		if t.IsRegular() && (name == "ledger.json" || strings.HasSuffix(name, ".ledger")) {
			out = append(out, fileOf(path, t))
		}
	})
	sortFiles(out)
	return out
}

// captureExtra lists what lies up to extraDepth below each extra dir, plus
// each decoy file that exists, sorted by path.
// Equivalent to: find <extra> -mindepth 1 -maxdepth 2.
func captureExtra(dirs, decoyFiles []string, inc *incomplete) []snapshots.File {
	out := []snapshots.File{}
	seen := map[string]bool{}
	for _, d := range dirs {
		walk(d, extraDepth, inc, "extra", func(path string, t fs.FileMode) {
			if !seen[path] {
				seen[path] = true
				out = append(out, fileOf(path, t))
			}
		})
	}
	for _, p := range decoyFiles {
		p = filepath.Clean(p)
		if seen[p] {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				inc.add("extra: %v", err)
			}
			continue
		}
		seen[p] = true
		out = append(out, fileOf(p, fi.Mode().Type()))
	}
	sortFiles(out)
	return out
}

// walk calls fn for every entry up to depth levels below dir, without
// following symbolic links. A missing dir is empty; other read errors are
// recorded under what.
func walk(dir string, depth int, inc *incomplete, what string, fn func(path string, t fs.FileMode)) {
	if depth <= 0 {
		return
	}
	ents, err := readDir(dir)
	if err != nil {
		inc.add("%s: %v", what, err)
	}
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		fn(path, e.Type())
		if e.IsDir() {
			walk(path, depth-1, inc, what, fn)
		}
	}
}

// readDir lists dir; a missing dir has no entries and is no error.
func readDir(dir string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ents, err
}

// fileOf records path with its kind; a symbolic link gets its target.
func fileOf(path string, t fs.FileMode) snapshots.File {
	f := snapshots.File{Path: path}
	switch {
	case t&fs.ModeSocket != 0:
		f.Kind = "socket"
	case t&fs.ModeSymlink != 0:
		f.Kind = "symlink"
		f.Target, _ = os.Readlink(path)
	case t.IsDir():
		f.Kind = "dir"
	case t.IsRegular():
		f.Kind = "file"
	default:
		f.Kind = "other"
	}
	return f
}

func sortFiles(fs []snapshots.File) {
	slices.SortFunc(fs, func(a, b snapshots.File) int { return strings.Compare(a.Path, b.Path) })
}

// captureSockets lists the unix sockets matching globs (Sockets), a
// failure leaving the capture incomplete. Reads nothing when globs is
// empty.
func captureSockets(proc string, globs []string, inc *incomplete) []snapshots.Socket {
	out, err := Sockets(proc, globs)
	if err != nil {
		inc.add("sockets: %v", err)
	}
	return out
}

// Sockets lists the unix sockets matching globs, each with whether a
// process of the reader's network namespace listens on it (its path is
// bound in <proc>/net/unix), sorted by path: what the judge sees and what
// the last resort removes are one list. Reads nothing when globs is empty.
// Equivalent to: ls -l GLOB; ss -xl.
func Sockets(proc string, globs []string) ([]snapshots.Socket, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	bound, err := BoundSockets(proc)
	if err != nil {
		return nil, err
	}
	var out []snapshots.Socket
	var errs []error
	for _, g := range globs {
		paths, err := filepath.Glob(g)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g, err))
			continue
		}
		for _, p := range paths {
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSocket != 0 {
				out = append(out, snapshots.Socket{Path: p, Listening: bound[p], Inode: inodeOf(fi)})
			}
		}
	}
	slices.SortFunc(out, func(a, b snapshots.Socket) int { return strings.Compare(a.Path, b.Path) })
	return out, errors.Join(errs...)
}

// BoundSockets reads the paths unix sockets are bound at in the reader's
// network namespace, from <proc>/net/unix (its last column).
func BoundSockets(proc string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(proc, "net", "unix"))
	if err != nil {
		return nil, err
	}
	bound := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 8 && strings.HasPrefix(f[7], "/") {
			bound[f[7]] = true
		}
	}
	return bound, nil
}

// StateGlob turns a Roots.State glob into a filesystem glob: "{state}"
// is any run's state dir, at the start ("{state}/runc/*") or inside a
// host-global path made from it ("/run/tool/lock{state}/*").
func StateGlob(roots snapshots.Roots, g string) string {
	return filepath.Clean(strings.ReplaceAll(g, "{state}", filepath.Join(roots.StateRoot, "*")))
}

// captureState lists the entries matching roots.State, sorted, a bad
// glob leaving the capture incomplete. Equivalent to: ls -d GLOB.
func captureState(roots snapshots.Roots, inc *incomplete) []snapshots.File {
	var out []snapshots.File
	for _, g := range roots.State {
		paths, err := filepath.Glob(StateGlob(roots, g))
		if err != nil {
			inc.add("state %s: %v", g, err)
			continue
		}
		for _, p := range paths {
			if fi, err := os.Lstat(p); err == nil {
				f := fileOf(p, fi.Mode())
				if roots.ByProvenance && !model.Within(p, roots.StateRoot) {
					f.Inode = inodeOf(fi)
				}
				out = append(out, f)
			}
		}
	}
	sortFiles(out)
	return slices.CompactFunc(out, func(a, b snapshots.File) bool { return a.Path == b.Path })
}

// InodeOf is inodeOf for the last resort, which removes a claimed entry
// only while it is the file claimed.
func InodeOf(fi fs.FileInfo) string { return inodeOf(fi) }

// inodeOf is a file's "dev:ino" (major:minor:ino), what a claim names a
// state entry or socket by: a path is anyone's to make again.
func inodeOf(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
}

// SocketHolders names, for each of the given socket paths bound in the
// reader's network namespace, the pids that hold the bound socket open
// (its listener and whoever inherited it), from <proc>/net/unix and each
// process's descriptors. A process whose descriptors cannot be read is
// left out. Equivalent to: ss -xlp.
func SocketHolders(proc string, paths []string) (map[string][]int, error) {
	out := map[string][]int{}
	if len(paths) == 0 {
		return out, nil
	}
	b, err := os.ReadFile(filepath.Join(proc, "net", "unix"))
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	byIno := map[string]string{} // "socket:[ino]" -> path
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 8 && want[f[7]] {
			byIno["socket:["+f[6]+"]"] = f[7]
		}
	}
	if len(byIno) == 0 {
		return out, nil
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(proc, e.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			t, err := os.Readlink(filepath.Join(proc, e.Name(), "fd", fd.Name()))
			if p, ok := byIno[t]; err == nil && ok && !slices.Contains(out[p], pid) {
				out[p] = append(out[p], pid)
			}
		}
	}
	return out, nil
}
