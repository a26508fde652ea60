package described

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// EnvDirs names extra description files or directories (colon-separated),
// read after the built-in ones: a user adds a supervisor without a rebuild.
const EnvDirs = "FAULTWIN_SUPERVISORS"

// LoadFS reads every *.yaml in the root of fsys; prefix is how errors name
// the files ("supervisors/").
func LoadFS(fsys fs.FS, prefix string) ([]*Description, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	var srcs []source
	var errs []error
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		srcs = append(srcs, source{prefix + n, b})
	}
	out, perrs := parseAll(srcs, nil)
	return out, errors.Join(append(errs, perrs...)...)
}

// LoadPaths reads the description files and directories of a
// colon-separated list (a directory contributes its *.yaml files); a
// variant among them may vary one of bases (the built-in descriptions).
func LoadPaths(list string, bases ...*Description) ([]*Description, error) {
	var srcs []source
	var errs []error
	for _, p := range strings.Split(list, ":") {
		if p == "" {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w (given by --supervisor or %s)", p, err, EnvDirs))
			continue
		}
		files := []string{p}
		if st.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, "*.yaml"))
			slices.Sort(files)
			// a .yml description would be missing without a word
			yml, _ := filepath.Glob(filepath.Join(p, "*.yml"))
			for _, f := range yml {
				errs = append(errs, fmt.Errorf("%s:1: document: descriptions are read from *.yaml files only (rename it to %s.yaml)", f, strings.TrimSuffix(filepath.Base(f), ".yml")))
			}
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			srcs = append(srcs, source{f, b})
		}
	}
	out, perrs := parseAll(srcs, bases)
	return out, errors.Join(append(errs, perrs...)...)
}
