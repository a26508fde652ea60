package hostview

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
)

// Bounds of a manifest: a root larger than these is refused rather than
// read for minutes (a description names too much).
const (
	MaxFiles = 20000
	MaxBytes = 1 << 30
)

// ManifestOf lists the files under root (each of include, or all of
// root), leaving out skip and what lies below them: type, size, mode and
// a regular file's sha256. It never follows a symlink, and reads a root
// through /proc/<pid>/root as that process sees it.
func ManifestOf(of, workload, root string, include, skip []string) model.Manifest {
	m := model.Manifest{Of: of, Workload: workload, Root: root, Include: include, Skip: skip, Files: []model.FileEntry{}}
	var total int64
	err := walk(root, include, skip, func(rel string, fi fs.FileInfo) error {
		if len(m.Files) == MaxFiles {
			return fmt.Errorf("more than %d files under %s: name fewer paths", MaxFiles, root)
		}
		e, err := entry(filepath.Join(root, rel), rel, fi)
		if err != nil {
			return err
		}
		if total += e.Size; total > MaxBytes {
			return fmt.Errorf("more than %d bytes under %s: name fewer paths", MaxBytes, root)
		}
		m.Files = append(m.Files, e)
		return nil
	})
	if err != nil {
		m.Err = err.Error()
	}
	return m
}

// Compare reads each file of m again under root (where the tree is found
// after; m.Root when ""), and names every one missing or changed. Files
// that appeared since are not damage: the user's workload writes.
func Compare(m model.Manifest, root string) model.FilesCheck {
	if root == "" {
		root = m.Root
	}
	c := model.FilesCheck{Of: m.Of, Root: root}
	if m.Err != "" {
		c.Err = "its manifest before the trigger was not read: " + m.Err
		return c
	}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		// gone as a whole: every file of it is missing
		for _, want := range m.Files {
			c.Checked++
			c.Damage = append(c.Damage, model.Damage{Of: m.Of, Path: want.Path, What: "missing (" + root + " is gone)"})
		}
		return c
	} else if err != nil {
		c.Err = err.Error()
		return c
	}
	for _, want := range m.Files {
		c.Checked++
		p := filepath.Join(root, want.Path)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			c.Damage = append(c.Damage, model.Damage{Of: m.Of, Path: want.Path, What: "missing"})
			continue
		}
		if err != nil {
			c.Damage = append(c.Damage, model.Damage{Of: m.Of, Path: want.Path, What: "unreadable: " + err.Error()})
			continue
		}
		got, err := entry(p, want.Path, fi)
		if err != nil {
			c.Damage = append(c.Damage, model.Damage{Of: m.Of, Path: want.Path, What: "unreadable: " + err.Error()})
			continue
		}
		if what := changed(want, got); what != "" {
			c.Damage = append(c.Damage, model.Damage{Of: m.Of, Path: want.Path, What: what})
		}
	}
	return c
}

// ProcessRoot is the root of a workload as its first live process sees
// it, or why it has none.
func ProcessRoot(w model.Workload) (string, error) {
	if len(w.PIDs) == 0 {
		return "", fmt.Errorf("%s has no live process to read its root through", w.Name)
	}
	pids := slices.Clone(w.PIDs)
	slices.Sort(pids)
	return filepath.Join(ProcRoot, strconv.Itoa(pids[0]), "root"), nil
}

func changed(want, got model.FileEntry) string {
	switch {
	case want.Type != got.Type:
		return "type " + want.Type + " -> " + got.Type
	case want.Link != got.Link:
		return "link " + want.Link + " -> " + got.Link
	case want.Size != got.Size:
		return "size " + strconv.FormatInt(want.Size, 10) + " -> " + strconv.FormatInt(got.Size, 10)
	case want.SHA256 != got.SHA256:
		return "content changed (sha256 " + short(want.SHA256) + " -> " + short(got.SHA256) + ")"
	case want.Mode != got.Mode:
		return "mode " + want.Mode + " -> " + got.Mode
	}
	return ""
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func entry(p, rel string, fi fs.FileInfo) (model.FileEntry, error) {
	e := model.FileEntry{Path: rel, Mode: fmt.Sprintf("%04o", uint32(fi.Mode().Perm())|special(fi.Mode()))}
	switch t := fi.Mode().Type(); {
	case t == 0:
		e.Type, e.Size = "file", fi.Size()
		sum, err := hashFile(p)
		if err != nil {
			return e, err
		}
		e.SHA256 = sum
	case t&fs.ModeDir != 0:
		e.Type = "dir"
	case t&fs.ModeSymlink != 0:
		e.Type = "symlink"
		l, err := os.Readlink(p)
		if err != nil {
			return e, err
		}
		e.Link = l
	case t&fs.ModeNamedPipe != 0:
		e.Type = "fifo"
	case t&fs.ModeSocket != 0:
		e.Type = "socket"
	default:
		e.Type = "device"
	}
	return e, nil
}

func special(m fs.FileMode) uint32 {
	var s uint32
	if m&fs.ModeSetuid != 0 {
		s |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		s |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		s |= 0o1000
	}
	return s
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// walk visits every file under root/include (root itself left out), in
// name order, with its path relative to root; skip's paths and what lies
// below them are left out.
func walk(root string, include, skip []string, visit func(rel string, fi fs.FileInfo) error) error {
	if len(include) == 0 {
		include = []string{"."}
	}
	skipped := func(rel string) bool {
		for _, s := range skip {
			s = filepath.Clean(s)
			if rel == s || strings.HasPrefix(rel, s+"/") {
				return true
			}
		}
		return false
	}
	for _, inc := range include {
		top := filepath.Join(root, filepath.Clean(inc))
		if filepath.Clean(inc) == "." {
			// root itself may be a process's /proc/<pid>/root, a link
			// Walk would not go through
			top = root + "/."
		}
		err := filepath.Walk(top, func(p string, fi fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if rel == "." {
				return nil
			}
			if skipped(rel) {
				if fi.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			return visit(rel, fi)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CompareRoot compares m with a workload's root as its first live process
// sees it. A process that is gone before or during the read leaves the
// files unchecked, never missing: its root went with it.
func CompareRoot(m model.Manifest, w model.Workload) model.FilesCheck {
	root, err := ProcessRoot(w)
	if err == nil {
		_, err = os.Stat(root)
	}
	if err != nil {
		return model.FilesCheck{Of: m.Of, Root: root, Err: err.Error()}
	}
	c := Compare(m, root)
	if _, err := os.Stat(root); err != nil {
		return model.FilesCheck{Of: m.Of, Root: root, Err: "its process exited while its root was read: " + err.Error()}
	}
	return c
}

// CheckRoot records, on w read after the trigger, its root compared with
// the image manifest of workload (any workload's for ""), as its own
// process sees it; a removed workload has nothing to check.
func CheckRoot(a *model.Aftermath, workload string, w *model.Workload) {
	m, ok := a.ManifestOf(model.OfImage, workload)
	if !ok || a.Expect == model.ExpectAbsent {
		return
	}
	c := CompareRoot(m, *w)
	w.Files = &c
}

// CheckCheckpoints compares each checkpoint manifest of a with the host,
// once the recovery is over.
func CheckCheckpoints(a *model.Aftermath) {
	for _, m := range a.Manifests {
		if m.Of == model.OfCheckpoint {
			a.Checkpoints = append(a.Checkpoints, Compare(m, ""))
		}
	}
}
