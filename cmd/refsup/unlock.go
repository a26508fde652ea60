package main

import (
	"errors"
	"fmt"
	"io"

	"faultwin/fixtures/refsup/daemon"
)

// cmdUnlock releases a checkpoint's restore lock that no running daemon
// holds: a step outside the user's verbs, for one who knows refsup's files.
func cmdUnlock(stdout io.Writer, args []string) error {
	var c common
	fs := newFlags("unlock", &c)
	cid := fs.String("checkpoint", "", "checkpoint id")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *cid == "" {
		return errors.New("unlock needs --checkpoint <id>")
	}
	lay, err := c.layout("unlock")
	if err != nil {
		return err
	}
	msg, err := daemon.Unlock(lay, *cid)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, msg)
	return err
}
