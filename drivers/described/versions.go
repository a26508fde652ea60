package described

import (
	"context"
	"strings"
	"sync"
	"time"
)

// versionsOf caches, per description, the versions its components printed:
// they are read once per process (a soak's hundreds of rows share them),
// not once per window.
var versionsOf sync.Map // description name -> map[string]string

// Versions gives what each command the description requires prints as its
// version (its version_args, or --version): the first line of its output,
// or why it printed none. A finding must say exactly what it was seen on.
// Read once per process, each bounded by 5 s.
func (d *Description) Versions(ctx context.Context) map[string]string {
	if v, ok := versionsOf.Load(d.Name); ok {
		return v.(map[string]string)
	}
	dirs := d.searchDirs("")
	out := map[string]string{}
	for _, r := range d.requirements() {
		if r.Command == "" {
			continue
		}
		args := r.VersionArgs
		if len(args) == 0 {
			args = []string{"--version"}
		}
		file := lookPath(dirs, r.Command)
		if file == "" {
			out[r.Command] = "not found on PATH"
			continue
		}
		b, err := runVersion(ctx, 5*time.Second, file, args, dirs)
		line := firstLine(string(b))
		if err != nil {
			line = strings.TrimSpace(err.Error() + ": " + line)
		}
		out[r.Command] = line
	}
	versionsOf.Store(d.Name, out)
	return out
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
