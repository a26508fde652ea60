package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"faultwin/reports/rows"
	"faultwin/reports/sigs"
)

const signUsage = `usage: faultwin sign --key KEY FILE|DIR...

Signs every sealed session of each rows file with the SSH key KEY, as
` + "`ssh-keygen -Y sign -n faultwin-rows -f KEY`" + ` does (it runs ssh-keygen):
a private key file, or a public key whose private half an ssh-agent holds.
A directory stands for every *.jsonl and *.jsonl.gz file below it.

What is signed is each session's seal: its hash and what it records (the
file's row count, last row hash, the session's open marker), and the seal's
hash commits to every line before it. The signatures go to FILE.sig, next to
the file (one "seal <hash>" line and one armored SSH signature per sealed
session); the rows file itself is not changed. Seals signed before are
kept, so signing again after a new session signs only the new seal. A
session without a seal is not signed (seal it first).

` + "`faultwin replay --signers ALLOWED_SIGNERS [--require-signed]`" + ` and
` + "`faultwin merge`" + ` with the same flags verify the signatures; see
docs/rows.md, "What a hash chain proves and what a signature adds".

Exit status: 0 when every file's seals are signed, 1 when a file does not
read or verify or ssh-keygen refused to sign, 64 a usage error (no --key,
no FILE, a path that does not exist).
`

// runSign is `faultwin sign`.
func runSign(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "sign", signUsage)
	key := fs.String("key", "", "the SSH `key` to sign with, as ssh-keygen -Y sign -f takes it (required)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *key == "" {
		return fs.usagef("--key is required: the SSH key to sign the seals with")
	}
	paths, err := jsonlFiles("sign", fs.Args())
	if err != nil {
		return err
	}
	for _, p := range paths {
		// A file written before sealing has nothing to sign: say so
		// rather than "signed 0 seals" and a signature file never written.
		if c, err := rows.VerifyContents(p); err == nil && c.Sealing().State == rows.Legacy {
			return fs.usagef("%s is a legacy file (written before sealing): it has no seal to sign; `faultwin compact %s NEW.jsonl.gz` writes its rows as a sealed chain, which sign signs", p, p)
		}
	}
	var errs []error
	for _, p := range paths {
		s, err := sigs.Sign(ctx, p, *key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		msg := fmt.Sprintf("sign: %s: signed %s, %d signed before, in %s", p, count(s.New, "seal"), s.Already, sigs.Path(p))
		if s.Unsealed > 0 {
			msg += fmt.Sprintf("; %s without a seal not signed", count(s.Unsealed, "session"))
		}
		fmt.Fprintln(stdout, msg)
	}
	if len(errs) > 0 {
		return statusExit{exitFail, "sign: " + errors.Join(errs...).Error()}
	}
	return nil
}

// signerFlags are the signature flags replay and merge share.
type signerFlags struct {
	signers *string
	require *bool
}

func addSignerFlags(fs *verbFlags) signerFlags {
	return signerFlags{
		signers: fs.String("signers", "", "verify each sealed session's signature (FILE.sig, made by faultwin sign) against this ssh-keygen allowed_signers `file`"),
		require: fs.Bool("require-signed", false, "fail a session (or a legacy file) without a signature that verifies against --signers"),
	}
}

// check refuses --require-signed without --signers, and a --signers file
// that cannot be read: every file would otherwise be judged against no key
// at all, and a file with no signature would pass unasked.
func (s signerFlags) check(fs *verbFlags) error {
	if *s.require && *s.signers == "" {
		return fs.usagef("--require-signed needs --signers ALLOWED_SIGNERS: the keys whose signatures are accepted")
	}
	if *s.signers != "" {
		st, err := os.Stat(*s.signers)
		switch {
		case err != nil:
			return fs.usagef("--signers %s: %v (an ssh-keygen allowed_signers file: one line per key, \"faultwin@<host> ssh-ed25519 AAAA...\")", *s.signers, errors.Unwrap(err))
		case st.IsDir():
			return fs.usagef("--signers %s is a directory: name the allowed_signers file", *s.signers)
		}
	}
	return nil
}

// verify checks the signatures of paths when --signers is given, prints
// one line per file and each problem, and returns the problems.
func (s signerFlags) verify(ctx context.Context, stdout io.Writer, verb string, paths []string) []string {
	if *s.signers == "" {
		return nil
	}
	var problems []string
	fmt.Fprintf(stdout, "\n%s: signatures (allowed signers %s%s):\n", verb, *s.signers, map[bool]string{true: ", every session must be signed"}[*s.require])
	for _, p := range paths {
		f := sigs.Verify(ctx, p, *s.signers)
		fmt.Fprintf(stdout, "  %s\n", f.Summary())
		for _, pr := range f.Problems(*s.require) {
			fmt.Fprintf(stdout, "    REJECTED %s\n", pr)
			problems = append(problems, pr)
		}
	}
	return problems
}

// signatureExit is the failure of a signature check, naming each problem.
func signatureExit(verb string, problems []string) error {
	return statusExit{exitUnverified, fmt.Sprintf("%s: %s rejected: %s", verb, count(len(problems), "signature check"), strings.Join(problems, "; "))}
}
