package definitions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"

	"gopkg.in/yaml.v3"
)

// Ext is the extension of definition files; other files in the directory are
// ignored, except *.yml, which is refused so a definition is never skipped
// silently.
const Ext = ".yaml"

// Load reads every *.yaml file in dir and returns the window instances in
// natural order (W1 < W2 < ... < W16 < ORPHAN, then by delay). Window.File is
// relative to the enclosing repository (the nearest directory above dir with
// .git or go.mod), or to dir's parent if there is none. All problems are
// returned together, joined.
func Load(dir string, specs []model.DriverSpec) ([]model.Window, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root := findRoot(abs)
	if root == "" {
		root = filepath.Dir(abs)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, err
	}
	return LoadFS(os.DirFS(root), filepath.ToSlash(rel), specs)
}

// findRoot returns the nearest directory at or above dir holding .git or
// go.mod, or "".
func findRoot(dir string) string {
	for d := dir; ; {
		for _, marker := range []string{".git", "go.mod"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// LoadFS is Load on a file system: it reads dir's *.yaml files from fsys and
// names them path.Join(dir, name) in Window.File and in errors.
func LoadFS(fsys fs.FS, dir string, specs []model.DriverSpec) ([]model.Window, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("window definitions: %w", err)
	}
	var fams []family
	var errs []error
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if e.IsDir() {
			continue
		}
		if strings.HasSuffix(e.Name(), ".yml") {
			errs = append(errs, &Error{File: name, Line: 1, Field: "document", Problem: "definition files must end in " + Ext, Fix: "rename it to " + strings.TrimSuffix(e.Name(), ".yml") + Ext})
			continue
		}
		if !strings.HasSuffix(e.Name(), Ext) {
			continue
		}
		if info, err := e.Info(); err == nil && info.Size() > MaxFileBytes {
			errs = append(errs, tooBig(name, info.Size()))
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got, ferrs := parseFile(name, data, specs)
		fams = append(fams, got...)
		errs = append(errs, ferrs...)
	}
	if len(fams) == 0 && len(errs) == 0 {
		return nil, fmt.Errorf("window definitions: no *%s file with a definition in %s", Ext, dir)
	}
	ws, derrs := expand(fams)
	errs = append(errs, derrs...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ws, nil
}

// ParseFile parses one definition file's bytes, naming it name. Unlike Load
// it returns the windows of every family that is valid on its own together
// with the errors of the others, so that registration can read a family
// from an old commit whose file holds some other, broken family.
func ParseFile(name string, data []byte, specs []model.DriverSpec) ([]model.Window, error) {
	fams, errs := parseFile(name, data, specs)
	ws, derrs := expand(fams)
	return ws, errors.Join(append(errs, derrs...)...)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// tooBig is the error of a definition file over MaxFileBytes.
func tooBig(name string, size int64) error {
	return &Error{File: name, Line: 1, Field: "document", Problem: fmt.Sprintf("%d bytes, at most %d", size, MaxFileBytes),
		Fix: "a definition file holds window definitions only: remove what is not one, or split the definitions over several files"}
}

// parseFile returns the valid families of a file and the problems of all.
// A file over MaxFileBytes is refused before parsing.
func parseFile(name string, data []byte, specs []model.DriverSpec) ([]family, []error) {
	if len(data) > MaxFileBytes {
		return nil, []error{tooBig(name, int64(len(data)))}
	}
	p := &problems{file: name, specs: map[string]model.DriverSpec{}}
	for _, s := range specs {
		p.specs[s.Name] = s
	}
	var fams []family
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				line, _ = strconv.Atoi(m[1])
				msg = strings.TrimPrefix(msg, m[0]+": ")
			}
			p.add(line, "document", msg, "fix the YAML syntax")
			break
		}
		if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
			continue // an empty document, e.g. after a trailing ---
		}
		if f, ok := parseFamily(p, doc.Content[0]); ok {
			fams = append(fams, f)
		}
	}
	if len(fams) == 0 && len(p.errs) == 0 {
		p.add(1, "document", "no window definition in this file", "add one or remove the file")
	}
	return fams, p.errs
}

// expand checks that family and instance ids are unique and turns each
// family into its instances, in natural order.
func expand(fams []family) ([]model.Window, []error) {
	var errs []error
	seen := map[string]family{}
	var ws []model.Window
	for _, f := range fams {
		if first, dup := seen[f.ID]; dup {
			errs = append(errs, &Error{File: f.file, Line: f.idLine, Field: "id",
				Problem: fmt.Sprintf("family %s is already defined at %s:%d", f.ID, first.file, first.idLine),
				Fix:     "give this family a new id"})
			continue
		}
		seen[f.ID] = f
		ws = append(ws, f.instances()...)
	}
	ids := map[string]bool{}
	for _, w := range ws {
		if ids[w.ID] {
			errs = append(errs, &Error{File: w.File, Line: w.Line, Field: "id", Problem: "instance " + w.ID + " is defined twice", Fix: "change the family id or its delays"})
		}
		ids[w.ID] = true
	}
	slices.SortStableFunc(ws, func(a, b model.Window) int { return model.CompareIDs(a.ID, b.ID) })
	return ws, errs
}

// instances expands a family: one window per delay, or one window named
// after the family when it has no delays.
func (f family) instances() []model.Window {
	src := f.canonical()
	base := model.Window{
		ID:           f.ID,
		Family:       f.ID,
		Driver:       f.Driver,
		Operation:    f.Operation,
		Fault:        model.Fault{Point: f.Point, Kill: f.Kill, LandsIn: f.LandsIn},
		Precondition: f.Pre,
		Criteria:     slices.Clone(f.Criteria),
		Labels:       slices.Clone(f.Labels),
		SecondDeath:  f.SecondDeath,
		Description:  f.Description,
		File:         f.file,
		Line:         f.line,
		Source:       src,
		Hash:         model.HashSource(src),
	}
	if len(f.Delays) == 0 {
		return []model.Window{base}
	}
	ws := make([]model.Window, 0, len(f.Delays))
	for _, d := range f.Delays {
		w := base
		w.ID = InstanceID(f.ID, d)
		w.Fault.DelayMS = d
		if phase, ok := f.LandsAt[d]; ok {
			w.Fault.LandsIn = phase
		}
		w.Criteria = slices.Clone(f.Criteria)
		w.Labels = slices.Clone(f.Labels)
		ws = append(ws, w)
	}
	return ws
}
