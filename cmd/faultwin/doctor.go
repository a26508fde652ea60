package main

import (
	"context"
	"io"
	"os"

	"faultwin/drivers"
	"faultwin/drivers/catalog"
	"faultwin/drivers/doctor"
)

const doctorUsage = `usage: faultwin doctor [--criu PATH] [--path PATH]

Checks that this host can run windows for real, one line per prerequisite:
OK, MISSING or WARN, with the command that fixes what is missing. Every
check probes the real thing (a namespace entered, a veth made, an nft
table written, a binary run). First faultwin's own prerequisites (root,
kernel, cgroups, overlayfs, namespaces, veth, nftables, CRIU, Xvfb,
openbox), then what each driver's supervisor needs: a described
supervisor's requires: list (podman's in
drivers/described/supervisors/podman.yaml).

It needs root and changes the host while it probes (it mounts a tmpfs and
an overlay, makes a network namespace, a veth and an nft table, and runs
criu check), undoing each change. To check a description or window files
alone, without root and without touching the host: faultwin lint.

Exit status: 0 when every required prerequisite is there, 1 when one is
missing, 64 a usage error.
`

func runDoctor(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "doctor", doctorUsage)
	fs.supervisors()
	criu := fs.String("criu", envOr("FAULTWIN_CRIU", doctor.DefaultCRIU), "absolute path of the criu binary (env FAULTWIN_CRIU)")
	path := fs.String("path", "", "PATH to search for Xvfb, openbox and the commands the drivers require (default: the process's PATH)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	checks := doctor.Run(ctx, doctor.Config{CRIU: *criu, Path: *path})
	if err := catalog.Err(); err != nil {
		checks = append(checks, doctor.Check{Name: "supervisor descriptions", Detail: err.Error(),
			Fix: "correct the description files named (drivers/described/supervisors, FAULTWIN_SUPERVISORS)"})
	}
	for _, p := range catalog.HostChecks(ctx, *path) {
		checks = append(checks, driverCheck(p))
	}
	return doctor.Report(stdout, checks)
}

// driverCheck is a driver's prerequisite as a doctor line: its fix is the
// one command that installs every prerequisite, naming what provides it.
func driverCheck(p drivers.Prerequisite) doctor.Check {
	fix := doctor.Fix
	if p.Fix != "" {
		fix += " (" + p.Fix + ")"
	}
	return doctor.Check{Name: p.Name, OK: p.OK, Detail: p.Detail, Fix: fix}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
