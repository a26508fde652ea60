package main

import (
	"context"
	"io"

	"faultwin/fixtures/refsup/criu"
	"faultwin/fixtures/refsup/daemon"
)

func cmdServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var c common
	fs := newFlags("serve", &c)
	fs.Var(&c.bugs, "bug", "known-bug switch to turn on (repeatable)")
	fs.String("tag", "", "the run's argv tag, faultwin:<run> (marks this process)")
	criuPath := fs.String("criu", criu.DefaultPath, "CRIU binary (absolute path)")
	takeOver := fs.Bool("recover", false, "take over the ledger of this run's dead daemon and settle its capture intents")
	netLock := fs.String("network-lock", "skip", "CRIU's network lock for checkpoints and restores: nftables or skip")
	killWait := fs.Duration("kill-wait", daemon.DefaultKillWait, "how long a teardown waits for a killed process to go and for a session's cgroup to empty")
	if err := parse(fs, args); err != nil {
		return err
	}
	lay, err := c.layout("serve")
	if err != nil {
		return err
	}
	bs, err := c.bugSet()
	if err != nil {
		return err
	}
	srv, err := daemon.New(daemon.Config{Layout: lay, Bugs: bs, CRIUPath: *criuPath, NetworkLock: *netLock, Ready: stdout,
		Recover: *takeOver, KillWait: *killWait})
	if err != nil {
		return err
	}
	return srv.Serve(ctx)
}
