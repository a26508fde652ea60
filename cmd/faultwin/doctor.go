package main

import (
	"context"
	"flag"
	"io"
	"os"

	"faultwin/drivers/doctor"
)

func runDoctor(ctx context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stdout)
	criu := fs.String("criu", envOr("FAULTWIN_CRIU", doctor.DefaultCRIU), "absolute path of the criu binary (env FAULTWIN_CRIU)")
	path := fs.String("path", "", "PATH to search for Xvfb and openbox (default: the process's PATH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	checks := doctor.Run(ctx, doctor.Config{CRIU: *criu, Path: *path})
	return doctor.Report(stdout, checks)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
