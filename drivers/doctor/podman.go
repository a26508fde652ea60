package doctor

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// The podman windows' prerequisites (drivers/described/supervisors/podman.yaml): podman 4 with
// runc and conmon on PATH, netavark where podman looks for it, and a static
// busybox to build the image from (there is no registry to pull one).

// checkPodman runs `podman --version`: the binary must start, not only exist.
func checkPodman(ctx context.Context, cfg Config) Check {
	c := Check{Name: "podman >= 4", Fix: Fix + " (Debian package podman)"}
	p, err := lookPath(cfg.Path, "podman")
	if err != nil {
		c.Detail = "not found on PATH"
		return c
	}
	out, err := exec.CommandContext(ctx, p, "--version").CombinedOutput()
	if err != nil {
		c.Detail = fmt.Sprintf("%s --version: %v", p, err)
		return c
	}
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "podman version"))
	var major int
	if _, err := fmt.Sscanf(v, "%d.", &major); err != nil || major < 4 {
		c.Detail = "version " + v
		return c
	}
	c.OK, c.Detail = true, p+" "+v
	return c
}

// NetavarkPaths are where podman 4 looks for its network backend.
var NetavarkPaths = []string{"/usr/lib/podman/netavark", "/usr/libexec/podman/netavark"}

func checkNetavark(context.Context, Config) Check {
	c := Check{Name: "netavark", Fix: Fix + " (Debian package netavark)"}
	for _, p := range NetavarkPaths {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			c.OK, c.Detail = true, p
			return c
		}
	}
	c.Detail = "not in " + strings.Join(NetavarkPaths, " or ")
	return c
}

// BusyboxPath is the static busybox the podman image is built from.
var BusyboxPath = "/bin/busybox"

// checkBusybox requires a static binary: the image has no libc.
func checkBusybox(context.Context, Config) Check {
	c := Check{Name: "busybox (static)", Fix: Fix + " (Debian package busybox-static)"}
	f, err := elf.Open(BusyboxPath)
	if err != nil {
		c.Detail = BusyboxPath + ": " + err.Error()
		return c
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			c.Detail = BusyboxPath + " is dynamically linked"
			return c
		}
	}
	c.OK, c.Detail = true, BusyboxPath
	return c
}
