package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"faultwin/model"
	"faultwin/runner"
)

// runSweep cleans a host after an interrupted run: it calls each dead run's
// own supervisor sweep (the harness never cleans up on a supervisor's
// behalf), then removes only the decoys the harness itself planted, then
// what runs whose state directory is gone left behind (sweepOrphans).
func runSweep(ctx context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stdout)
	root := fs.String("state-root", model.DefaultStateRoot, "refsup state root")
	bin := fs.String("refsup", filepath.Join(selfDir(), "refsup"), "refsup binary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	entries, err := os.ReadDir(*root)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "sweep: %s does not exist; no run to sweep\n", *root)
		return sweepOrphans(ctx, stdout, *root)
	}
	if err != nil {
		return err
	}
	var runs, planted []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(*root, e.Name())
		if runner.IsPlanted(dir) {
			planted = append(planted, dir)
			continue
		}
		runs = append(runs, e.Name())
	}
	sort.Strings(runs)
	var errs []error
	for _, run := range runs {
		cmd := exec.CommandContext(ctx, *bin, "sweep", "--root", *root, "--run", run)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			errs = append(errs, fmt.Errorf("refsup sweep of run %s: %w: %s", run, err, strings.TrimSpace(stderr.String())))
			continue
		}
		fmt.Fprintf(stdout, "sweep: run %s: %s\n", run, strings.TrimSpace(out.String()))
	}
	for _, dir := range planted {
		if err := runner.RemovePlanted(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "sweep: removed harness decoys in %s\n", dir)
	}
	if len(runs)+len(planted) == 0 {
		fmt.Fprintf(stdout, "sweep: no run under %s\n", *root)
	}
	errs = append(errs, sweepOrphans(ctx, stdout, *root))
	return errors.Join(errs...)
}
