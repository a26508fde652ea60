package criteria_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure keeps the criteria free of I/O: a stored row must be judged the
// same anywhere, without root, so nothing here may read the host. The
// package's own imports must hold no I/O package, and nothing it depends on,
// however indirectly, may be a procfs, netlink, nftables, mountinfo or CRIU
// library, a host capture, a driver or a fixture. (The standard library's
// own plumbing, such as time's use of syscall, is not held against it.)
func TestPure(t *testing.T) {
	for _, pkg := range []string{"faultwin/criteria", "faultwin/criteria/matchers"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{.Standard}}|{{join .Imports \",\"}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		seen := false
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			parts := strings.SplitN(line, "|", 3)
			if len(parts) != 3 {
				t.Fatalf("unexpected go list line %q", line)
			}
			path, std, imports := parts[0], parts[1] == "true", strings.Split(parts[2], ",")
			if path == pkg {
				seen = true
				for _, imp := range imports {
					if ioStd[imp] {
						t.Errorf("%s imports %s", pkg, imp)
					}
				}
			}
			if !std {
				if why := forbiddenDep(path); why != "" {
					t.Errorf("%s depends on %s (%s)", pkg, path, why)
				}
			}
		}
		if !seen {
			t.Fatalf("go list -deps %s did not list the package itself", pkg)
		}
	}
}

// ioStd are standard packages that reach the host.
var ioStd = map[string]bool{
	"os": true, "os/exec": true, "os/signal": true, "os/user": true, "syscall": true,
	"net": true, "net/http": true, "io/ioutil": true, "path/filepath": true, "unsafe": true,
}

// forbiddenDep says why a non-standard dependency has no place under pure
// judging code, or "".
func forbiddenDep(dep string) string {
	for _, p := range []string{"golang.org/x/sys", "github.com/prometheus/procfs", "github.com/vishvananda/",
		"github.com/mdlayher/", "github.com/google/nftables", "github.com/moby/sys/mountinfo", "github.com/checkpoint-restore/"} {
		if strings.HasPrefix(dep, p) {
			return "procfs, netlink, nftables, mountinfo or CRIU access"
		}
	}
	for _, p := range []string{"faultwin/snapshots/host", "faultwin/drivers/", "faultwin/fixtures/", "faultwin/windows"} {
		if dep == "faultwin/windows/definitions" {
			break // the window definitions are data; only their loader reads files
		}
		if strings.HasPrefix(dep, p) {
			return "host capture, driver, fixture or runner"
		}
	}
	return ""
}
