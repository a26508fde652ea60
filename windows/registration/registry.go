// Package registration answers, from git history, when a window family was
// registered and whether its definition is still the registered one. A window
// whose definition changed after registration measures something nobody
// committed to in advance, so reports mark it unregistered. It lives apart
// from definitions because it runs git; the loader stays free of exec.
package registration

import (
	"errors"
	"fmt"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"

	"faultwin/internal/gitcmd"
	"faultwin/internal/model"
	"faultwin/windows/definitions"
)

// DefaultDir is where definitions live in the repository when a window does
// not say (its File has no directory).
const DefaultDir = "windows"

// Registry reads one repository's history, caching what it parsed per commit
// so checking all 23 instances costs little more than checking one.
type Registry struct {
	top   string                    // the work tree's top level
	head  bool                      // the repository has at least one commit
	blobs map[string][]model.Window // blob id -> valid windows it defines
	specs []model.DriverSpec        // drivers old definitions are checked against
	spans map[string][]span         // a directory -> its history, moves followed
}

// span is a stretch of a directory's history: the commits (oldest first)
// while its definitions lay in dir.
type span struct {
	dir     string
	commits []string
}

// maxMoves bounds how many moves of a directory's definitions are followed
// back.
const maxMoves = 8

// Open prepares a Registry for the git work tree containing repoDir. It fails
// when git is missing or repoDir is not inside a work tree.
func Open(repoDir string, specs []model.DriverSpec) (*Registry, error) {
	top, err := gitcmd.Output(repoDir, "rev-parse", "--show-toplevel")
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("registration: git is not installed: %w", err)
		}
		return nil, fmt.Errorf("registration: %s is not inside a git work tree (run from a faultwin checkout): %w", repoDir, err)
	}
	r := &Registry{top: strings.TrimSpace(top), blobs: map[string][]model.Window{}, specs: specs, spans: map[string][]span{}}
	_, err = gitcmd.Output(r.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	r.head = err == nil
	return r, nil
}

// Registration returns the commit that first added w's family to the
// definitions and whether w's definition is identical to the one added
// there. A family not yet committed gives ("", false, nil).
func Registration(repoDir string, w model.Window, specs []model.DriverSpec) (commit string, registered bool, err error) {
	r, err := Open(repoDir, specs)
	if err != nil {
		return "", false, err
	}
	return r.Lookup(w)
}

// Lookup is Registration on an opened Registry. The registration commit is
// the oldest commit whose definition files hold a valid definition of the
// family: an invalid first draft does not count as a registration.
func (r *Registry) Lookup(w model.Window) (commit string, registered bool, err error) {
	if w.Family == "" || w.Hash == "" {
		return "", false, fmt.Errorf("registration: window %q has no family or hash (load it with definitions.Load)", w.ID)
	}
	if !r.head {
		return "", false, nil
	}
	dir := path.Dir(w.File)
	if w.File == "" || dir == "." || path.IsAbs(dir) {
		dir = DefaultDir
	}
	spans, err := r.history(dir)
	if err != nil {
		return "", false, err
	}
	for _, sp := range spans {
		// The pickaxe finds the first commit that wrote an id line of this
		// family; it is coarse (W1 also matches W10) and misses a later
		// commit that made a broken first draft valid without touching its
		// id line, so it only says where to start walking the span.
		last := sp.commits[len(sp.commits)-1]
		picks, err := gitcmd.Output(r.top, "log", "--reverse", "--format=%H", "-G", "id:.*"+regexp.QuoteMeta(w.Family), last, "--", sp.dir)
		if err != nil {
			return "", false, fmt.Errorf("registration: history of %s: %w", sp.dir, err)
		}
		first := strings.Fields(picks)
		if len(first) == 0 {
			continue
		}
		commits := sp.commits
		if i := slices.Index(commits, first[0]); i >= 0 {
			commits = commits[i:]
		}
		for _, c := range commits {
			ws, err := r.windowsAt(c, sp.dir)
			if err != nil {
				return "", false, err
			}
			for _, old := range ws {
				if old.Family == w.Family {
					return c, old.Hash == w.Hash, nil
				}
			}
		}
	}
	return "", false, nil
}

// history gives dir's commits, oldest first, preceded by the history of
// the directory its definitions were moved from: when dir's first commit
// renamed definition files into it (git's rename detection, so a move that
// also edited a file is followed too), the walk goes on in the directory
// they came from, up to that commit's parent, and so on back. A family
// keeps the registration it had before its file was moved.
func (r *Registry) history(dir string) ([]span, error) {
	if sp, ok := r.spans[dir]; ok {
		return sp, nil
	}
	var spans []span
	at, until := dir, "HEAD"
	for range maxMoves {
		all, err := gitcmd.Output(r.top, "log", "--reverse", "--format=%H", until, "--", dir)
		if err != nil {
			return nil, fmt.Errorf("registration: history of %s: %w", dir, err)
		}
		commits := strings.Fields(all)
		if len(commits) == 0 {
			break
		}
		spans = append([]span{{dir, commits}}, spans...)
		from, err := r.movedFrom(commits[0], dir)
		if err != nil {
			return nil, err
		}
		if from == "" {
			break
		}
		dir, until = from, commits[0]+"^"
	}
	r.spans[at] = spans
	return spans, nil
}

// movedFrom names the directory commit c renamed definition files of dir
// from, or "" when it renamed none into dir (or c has no parent).
func (r *Registry) movedFrom(c, dir string) (string, error) {
	if _, err := gitcmd.Output(r.top, "rev-parse", "--verify", "--quiet", c+"^"); err != nil {
		return "", nil // the first commit
	}
	out, err := gitcmd.Output(r.top, "diff-tree", "-r", "-M", "-z", "--name-status", "--no-commit-id", c+"^", c)
	if err != nil {
		return "", fmt.Errorf("registration: renames of %s: %w", c, err)
	}
	f := strings.Split(out, "\x00")
	for i := 0; i < len(f); i++ {
		if !strings.HasPrefix(f[i], "R") {
			if strings.HasPrefix(f[i], "C") {
				i += 2
			} else {
				i++
			}
			continue
		}
		if i+2 >= len(f) {
			break
		}
		old, now := f[i+1], f[i+2]
		i += 2
		if path.Dir(now) == dir && path.Dir(old) != dir && strings.HasSuffix(now, definitions.Ext) {
			return path.Dir(old), nil
		}
	}
	return "", nil
}

// windowsAt parses every definition file in dir at commit c, keeping the
// valid families even where a file also holds broken ones. Parses are cached
// by blob, so a file unchanged across commits is read once.
func (r *Registry) windowsAt(c, dir string) ([]model.Window, error) {
	tree, err := gitcmd.Output(r.top, "ls-tree", "-z", c, "--", dir+"/")
	if err != nil {
		return nil, fmt.Errorf("registration: list %s at %s: %w", dir, c, err)
	}
	var ws []model.Window
	for _, entry := range strings.Split(tree, "\x00") {
		// "<mode> blob <id>\t<path>"
		meta, name, ok := strings.Cut(entry, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 || fields[1] != "blob" || !strings.HasSuffix(name, definitions.Ext) {
			continue
		}
		blob := fields[2]
		got, seen := r.blobs[blob]
		if !seen {
			data, err := gitcmd.Output(r.top, "cat-file", "blob", blob)
			if err != nil {
				return nil, fmt.Errorf("registration: read %s at %s: %w", name, c, err)
			}
			got, _ = definitions.ParseFile(name, []byte(data), r.specs)
			r.blobs[blob] = got
		}
		ws = append(ws, got...)
	}
	return ws, nil
}
