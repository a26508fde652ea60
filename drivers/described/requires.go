package described

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"faultwin/drivers"
	"faultwin/internal/model"
)

// Requirement is one thing the supervisor needs of the host: a command on
// PATH (after path_prepend), optionally at least some version of it, or an
// executable file at one of some absolute paths; either optionally a
// statically linked binary.
type Requirement struct {
	// Name is how doctor names the check; by default the command ("podman
	// >= 4" with a min_version) or the first file's base name, with
	// " (static)" when it must be static.
	Name string `yaml:"name"`
	// Command is looked up on PATH (after path_prepend).
	Command string `yaml:"command"`
	// Files are absolute paths; the first executable one counts (a
	// helper distributions put in different places).
	Files []string `yaml:"files"`
	// VersionArgs runs the command with these arguments; it must exit 0,
	// and with MinVersion the first version number it prints ("4.3.1")
	// must be at least MinVersion ("4", "4.2").
	VersionArgs []string `yaml:"version_args"`
	// MinVersion is the least version VersionArgs must print.
	MinVersion string `yaml:"min_version"`
	// Static: the file must be an ELF with no interpreter (copied into
	// an image with no libc).
	Static bool `yaml:"static"`
	// Package names what provides it, for the fix ("Debian package
	// podman").
	Package string `yaml:"package"`
	// Install says how to get it when no Debian package provides it
	// ("make deps (go install sigs.k8s.io/cri-tools/cmd/crictl)").
	Install string `yaml:"install"`
}

// requires checks the requires: list.
func (c *checker) requires(rs []Requirement) {
	for i, r := range rs {
		f := fmt.Sprintf("requires[%d]", i)
		switch {
		case (r.Command == "") == (len(r.Files) == 0):
			c.addf(f, "give either command (looked up on PATH) or files (absolute paths, the first executable one counts)")
		case r.Package != "" && r.Install != "":
			c.addf(f, "give package (a Debian package) or install (how else to get it), not both")
		case strings.Contains(r.Command, "/"):
			c.addf(f+".command", "%q: name a command on PATH; an absolute path goes under files", r.Command)
		}
		for j, p := range r.Files {
			if !path.IsAbs(p) {
				c.addf(fmt.Sprintf("%s.files[%d]", f, j), "%q is not an absolute path", p)
			}
		}
		if r.MinVersion != "" {
			if _, ok := parseVersion(r.MinVersion); !ok {
				c.addf(f+".min_version", "%q: write a version such as 4 or 4.2", r.MinVersion)
			}
			if len(r.VersionArgs) == 0 || r.Command == "" {
				c.addf(f+".min_version", "needs command and version_args: the version is what the command prints")
			}
		}
		if len(r.VersionArgs) > 0 && r.Command == "" {
			c.addf(f+".version_args", "needs command: only a command is run")
		}
	}
}

// requirements are what doctor checks: Requires, after the binary unless a
// requirement names it.
func (d *Description) requirements() []Requirement {
	for _, r := range d.Requires {
		if r.Command == d.Binary {
			return d.Requires
		}
	}
	return append([]Requirement{{Command: d.Binary, VersionArgs: d.VersionArgs}}, d.Requires...)
}

// label is how doctor names r.
func (r Requirement) label() string {
	if r.Name != "" {
		return r.Name
	}
	n := r.Command
	if n == "" && len(r.Files) > 0 {
		n = filepath.Base(r.Files[0])
	}
	if r.MinVersion != "" {
		n += " >= " + r.MinVersion
	}
	if r.Static {
		n += " (static)"
	}
	return n
}

// CheckHost probes every requirement for real: a command must be found on
// PathPrepend then path ("" for the process's PATH) and, with version_args,
// run; a static one must be an ELF with no interpreter.
func (d *Description) CheckHost(ctx context.Context, path string) []drivers.Prerequisite {
	dirs := d.searchDirs(path)
	var out []drivers.Prerequisite
	for i, dir := range d.PathPrepend {
		// Its commands would be looked up past it, on the host's own PATH:
		// the supervisor run would be another build than the one described.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			out = append(out, drivers.Prerequisite{Name: fmt.Sprintf("path_prepend[%d] %s", i, dir),
				Detail: "no such directory: every command would be looked up past it", Fix: "install what path_prepend names, or correct path_prepend"})
		}
	}
	for _, r := range d.requirements() {
		out = append(out, d.checkRequirement(ctx, r, dirs))
	}
	return out
}

func (d *Description) checkRequirement(ctx context.Context, r Requirement, dirs []string) drivers.Prerequisite {
	p := drivers.Prerequisite{Name: r.label()}
	switch {
	case r.Package != "":
		p.Fix = "Debian package " + r.Package
	case r.Install != "":
		p.Fix = r.Install
	}
	var file string
	if r.Command != "" {
		file = lookPath(dirs, r.Command)
		if file == "" {
			p.Detail = "not found on PATH"
			return p
		}
	} else {
		for _, f := range r.Files {
			if executable(f) {
				file = f
				break
			}
		}
		if file == "" {
			p.Detail = "not in " + strings.Join(r.Files, " or ")
			return p
		}
	}
	p.Detail = file
	if r.Static {
		if err := isStatic(file); err != nil {
			p.Detail = err.Error()
			return p
		}
	}
	if len(r.VersionArgs) > 0 {
		b, err := runVersion(ctx, time.Duration(max(d.TimeoutMS, 1000))*time.Millisecond, file, r.VersionArgs, dirs)
		if err != nil {
			p.Detail = fmt.Sprintf("%s %s: %v: %s", file, strings.Join(r.VersionArgs, " "), err, lastLine(string(b)))
			return p
		}
		v := versionPattern.FindString(string(b))
		if r.MinVersion != "" {
			got, ok := parseVersion(v)
			if !ok {
				p.Detail = fmt.Sprintf("%s %s prints no version number: %s", file, strings.Join(r.VersionArgs, " "), lastLine(string(b)))
				return p
			}
			want, _ := parseVersion(r.MinVersion)
			if !atLeast(got, want) {
				p.Detail = fmt.Sprintf("%s: version %s, want >= %s", file, v, r.MinVersion)
				return p
			}
		}
		if v != "" {
			p.Detail = file + " version " + v
		}
	}
	p.OK = true
	return p
}

// lookPath finds an executable regular file name in dirs, or "".
func lookPath(dirs []string, name string) string {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p
		}
	}
	return ""
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// isStatic refuses a file that is not ELF or names an interpreter (a
// dynamic loader): an image with no libc needs a static binary.
func isStatic(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", file)
		}
	}
	return nil
}

var versionPattern = regexp.MustCompile(`\d+(?:\.\d+)*`)

// parseVersion reads "4.3.1" as [4 3 1].
func parseVersion(s string) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	var out []int
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// atLeast compares versions component by component; a missing component
// counts as 0.
func atLeast(got, want []int) bool {
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w int
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return g > w
		}
	}
	return true
}

// CheckHost implements drivers.HostChecker: the description's requires.
func (d *Driver) CheckHost(ctx context.Context, path string) []drivers.Prerequisite {
	return d.desc.CheckHost(ctx, path)
}

// SweepDead implements drivers.DeadSweeper: the description's own sweep on
// a run left by a window that never finished, twice as a window runs it.
func (d *Driver) SweepDead(ctx context.Context, run string) ([]model.SweepReport, error) {
	return SweepRun(ctx, d.desc, d.root, run)
}

// searchDirs is where a description's commands are looked up: PathPrepend,
// then path ("" for the process's PATH).
func (d *Description) searchDirs(path string) []string {
	if path == "" {
		path = os.Getenv("PATH")
	}
	return append(append([]string(nil), d.PathPrepend...), filepath.SplitList(path)...)
}

// runVersion runs file with a version's arguments, bounded, with dirs as
// its PATH, and returns what it printed.
func runVersion(ctx context.Context, bound time.Duration, file string, args, dirs []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, file, args...)
	cmd.Env = append(os.Environ(), "PATH="+strings.Join(dirs, string(filepath.ListSeparator)))
	return cmd.CombinedOutput()
}
