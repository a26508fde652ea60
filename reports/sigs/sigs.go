// Package sigs signs the seals of a rows file with an SSH key and verifies
// those signatures against an allowed_signers file, by running ssh-keygen
// (-Y sign, -Y find-principals, -Y verify), the reference implementation of
// SSH signatures.
//
// A hash chain makes a rows file tamper-evident against accidents only:
// whoever can run the rows package can drop a row and write the rest again
// with a chain that verifies. A signature by a key its owner holds binds a
// session's seal to that owner: the seal's hash commits to every line
// before it (its Prev is the session's last row, whose hash covers the
// chain back to line 1), so any re-chained file has other seal hashes and
// the signatures no longer match.
//
// What is signed, for each sealed session, is Message(seal): a few lines
// naming the seal's hash and what it records (rows, last row, open marker,
// end), under the namespace Namespace. Nothing path-dependent is signed, so
// a file keeps its signatures when copied or renamed.
//
// Where: a detached file next to the rows file, Path(file) = file + ".sig",
// so rows files and every reader of them are unchanged (an old faultwin
// ignores the .sig file; a directory's *.jsonl and *.jsonl.gz globs do not
// match it). It is text: per signed seal a line "seal <hash>" and the
// armored signature ssh-keygen wrote; lines starting with "#" are comments.
package sigs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"faultwin/reports/rows"
)

// Namespace is the SSH signature namespace of rows seals (ssh-keygen -n).
const Namespace = "faultwin-rows"

// Path is where the signatures of the rows file path are kept.
func Path(path string) string { return path + ".sig" }

// Message is what a signature over the seal m signs.
func Message(m rows.Marker) []byte {
	s := m.Seal
	return []byte(fmt.Sprintf("faultwin-rows seal v1\nseal %s\nrows %d\nsession_rows %d\nlast %s\nopen %s\nend %s\n",
		m.Hash, s.Rows, s.SessionRows, s.Last, s.Open, s.End))
}

// Entry is one signature of a .sig file.
type Entry struct {
	Seal      string // the seal's hash
	Signature string // the armored SSH signature, with its BEGIN and END lines
	Line      int    // the line of its "seal" header in the .sig file
}

const (
	armorBegin = "-----BEGIN SSH SIGNATURE-----"
	armorEnd   = "-----END SSH SIGNATURE-----"
)

// ReadFile reads a .sig file; a file that does not exist holds no entry
// (nil, nil).
func ReadFile(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	es, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}

// Parse reads the entries of a .sig file's content.
func Parse(b []byte) ([]Entry, error) {
	var out []Entry
	var cur *Entry
	var armor []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case armor != nil:
			armor = append(armor, line)
			if line == armorEnd {
				cur.Signature = strings.Join(armor, "\n") + "\n"
				out = append(out, *cur)
				cur, armor = nil, nil
			}
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "seal "):
			if cur != nil {
				return nil, fmt.Errorf("line %d: a seal line before the signature of the one at line %d", n, cur.Line)
			}
			h := strings.TrimSpace(strings.TrimPrefix(line, "seal "))
			if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
				return nil, fmt.Errorf("line %d: %q is not a seal hash", n, h)
			}
			cur = &Entry{Seal: h, Line: n}
		case line == armorBegin && cur != nil:
			armor = []string{line}
		default:
			return nil, fmt.Errorf("line %d: want \"seal <hash>\" followed by an armored SSH signature, got %q", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("the seal at line %d has no complete signature", cur.Line)
	}
	return out, nil
}

// Format renders entries as a .sig file of rowsFile.
func Format(rowsFile string, es []Entry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# SSH signatures (namespace %s) of the seals of %s; see docs/rows.md\n", Namespace, filepath.Base(rowsFile))
	for _, e := range es {
		fmt.Fprintf(&b, "seal %s\n%s", e.Seal, e.Signature)
	}
	return b.Bytes()
}

// seals returns the file's seals in order, after checking that it reads
// and verifies.
func seals(path string) ([]rows.Marker, rows.Sealing, error) {
	c, err := rows.ReadContents(path)
	if err != nil {
		return nil, rows.Sealing{}, err
	}
	if err := c.Verify(); err != nil {
		return nil, rows.Sealing{}, fmt.Errorf("%s: %w", path, err)
	}
	var out []rows.Marker
	for _, m := range c.Markers {
		if m.Seal != nil {
			out = append(out, m)
		}
	}
	return out, c.Sealing(), nil
}

// keygen runs ssh-keygen with stdin, returning its stdout; an error carries
// what it said on stderr.
func keygen(ctx context.Context, stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ssh-keygen", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), errors.New(strings.ReplaceAll(msg, "\n", "; "))
	}
	return out.String(), nil
}

// Signed is what Sign did to one file.
type Signed struct {
	Path     string
	New      int // seals signed now
	Already  int // seals signed before
	Unsealed int // sessions without a seal, not signed
}

// Sign signs every seal of the rows file path not yet signed in its .sig
// file with key (a private key file, or a public key whose private half an
// ssh-agent holds, as ssh-keygen -Y sign -f takes), and writes the .sig
// file (to a temporary file, then renamed). It refuses a file that does not
// read or verify; signatures the .sig file holds already are kept.
func Sign(ctx context.Context, path, key string) (Signed, error) {
	res := Signed{Path: path}
	ss, sealing, err := seals(path)
	if err != nil {
		return res, fmt.Errorf("not signed: %w", err)
	}
	res.Unsealed = len(sealing.Unsealed())
	es, err := ReadFile(Path(path))
	if err != nil {
		return res, fmt.Errorf("not signed: %w", err)
	}
	have := map[string]bool{}
	for _, e := range es {
		have[e.Seal] = true
	}
	for _, m := range ss {
		if have[m.Hash] {
			res.Already++
			continue
		}
		sig, err := keygen(ctx, Message(m), "-Y", "sign", "-f", key, "-n", Namespace)
		if err != nil {
			return res, fmt.Errorf("%s: not signed: ssh-keygen -Y sign -f %s: %v", path, key, err)
		}
		if !strings.HasPrefix(sig, armorBegin) {
			return res, fmt.Errorf("%s: not signed: ssh-keygen -Y sign wrote no armored signature", path)
		}
		es = append(es, Entry{Seal: m.Hash, Signature: sig})
		have[m.Hash] = true
		res.New++
	}
	if res.New == 0 {
		return res, nil
	}
	return res, writeAtomic(Path(path), Format(path, es))
}

func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// SessionCheck is the signature check of one session of a file.
type SessionCheck struct {
	Line      int    // the session's first line in the rows file
	Seal      string // its seal's hash; "" when unsealed
	Signed    bool   // a signature for the seal is in the .sig file
	OK        bool   // it verifies against the allowed signers
	Principal string // who signed it, when OK
	Problem   string // why not OK
}

// FileCheck is the signature check of one rows file.
type FileCheck struct {
	Path     string
	Err      error // the file or its .sig file did not read, or the file does not verify
	Legacy   bool  // a legacy file: no session, so nothing to sign
	Sessions []SessionCheck
	// Orphans are signatures in the .sig file of seals the file does not
	// hold: the file was changed after it was signed (re-chained, sessions
	// removed from its end), or the .sig file belongs to another file.
	Orphans []Entry
}

// Problems lists what fails the check: a file that did not read, a
// signature that does not verify, an orphan signature, and when
// requireSigned, a session (or legacy file) without a verified signature.
// Each problem names the file, the session and why.
func (f FileCheck) Problems(requireSigned bool) []string {
	var out []string
	if f.Err != nil {
		return []string{f.Err.Error()}
	}
	if f.Legacy && requireSigned {
		out = append(out, fmt.Sprintf("%s: unsigned: a legacy file (written before sealing) has no seal to sign", f.Path))
	}
	for _, s := range f.Sessions {
		switch {
		case s.OK:
		case s.Signed || requireSigned:
			out = append(out, fmt.Sprintf("%s: session at line %d%s: %s", f.Path, s.Line, sealName(s.Seal), s.Problem))
		}
	}
	for _, o := range f.Orphans {
		out = append(out, fmt.Sprintf("%s: %s line %d signs seal %s, which the file does not hold: the file was changed after it was signed (rows dropped or edited and the chain rewritten, or sessions cut from its end)",
			f.Path, filepath.Base(Path(f.Path)), o.Line, rows.ShortHash(o.Seal)))
	}
	return out
}

func sealName(h string) string {
	if h == "" {
		return ""
	}
	return " (seal " + rows.ShortHash(h) + ")"
}

// Verify checks the signatures of the rows file path against the
// allowed_signers file signers (ssh-keygen's format). Every session is
// checked: one whose seal has a signature is OK when ssh-keygen finds the
// signing key among the allowed signers (-Y find-principals) and the
// signature verifies over Message(seal) for that principal (-Y verify).
func Verify(ctx context.Context, path, signers string) FileCheck {
	f := FileCheck{Path: path}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		f.Err = fmt.Errorf("%s: signatures not checked: ssh-keygen (OpenSSH) is needed: %w", path, err)
		return f
	}
	ss, sealing, err := seals(path)
	if err != nil {
		f.Err = err
		return f
	}
	es, err := ReadFile(Path(path))
	if err != nil {
		f.Err = err
		return f
	}
	bySeal := map[string]Entry{}
	for _, e := range es {
		bySeal[e.Seal] = e
	}
	held := map[string]bool{}
	for _, m := range ss {
		held[m.Hash] = true
	}
	for _, e := range es {
		if !held[e.Seal] {
			f.Orphans = append(f.Orphans, e)
		}
	}
	f.Legacy = sealing.State == rows.Legacy
	dir, err := os.MkdirTemp("", "faultwin-sig-")
	if err != nil {
		f.Err = err
		return f
	}
	defer os.RemoveAll(dir)
	for i, s := range sealing.Sessions {
		sc := SessionCheck{Line: s.Line}
		if s.Seal == nil {
			sc.Problem = "unsigned: the session has no seal (the run never finished, or the file was cut from the end)"
			f.Sessions = append(f.Sessions, sc)
			continue
		}
		sc.Seal = s.Seal.Hash
		e, ok := bySeal[sc.Seal]
		if !ok {
			sc.Problem = "unsigned: " + filepath.Base(Path(path)) + " holds no signature of this seal"
			if len(f.Orphans) > 0 {
				sc.Problem += fmt.Sprintf(" (it holds %d of seals the file does not: the file was changed after it was signed)", len(f.Orphans))
			}
			f.Sessions = append(f.Sessions, sc)
			continue
		}
		sc.Signed = true
		sigFile := filepath.Join(dir, fmt.Sprintf("s%d.sig", i))
		if err := os.WriteFile(sigFile, []byte(e.Signature), 0o600); err != nil {
			f.Err = err
			return f
		}
		who, err := keygen(ctx, nil, "-Y", "find-principals", "-s", sigFile, "-f", signers)
		if err != nil {
			sc.Problem = fmt.Sprintf("signed by a key that is not in %s (ssh-keygen -Y find-principals: %v)", signers, err)
			f.Sessions = append(f.Sessions, sc)
			continue
		}
		var why []string
		for _, p := range strings.Fields(who) {
			if _, err := keygen(ctx, Message(*s.Seal), "-Y", "verify", "-f", signers, "-I", p, "-n", Namespace, "-s", sigFile); err == nil {
				sc.OK, sc.Principal = true, p
				break
			}
			why = append(why, fmt.Sprintf("%s: %v", p, err))
		}
		if !sc.OK {
			sc.Problem = fmt.Sprintf("the signature does not verify over this seal's content: the file was changed after it was signed, or the signature was moved from another seal (ssh-keygen -Y verify: %s)", strings.Join(why, "; "))
		}
		f.Sessions = append(f.Sessions, sc)
	}
	return f
}

// Summary is one line saying what the check found in a file.
func (f FileCheck) Summary() string {
	if f.Err != nil {
		return fmt.Sprintf("%s: signatures not checked: %v", f.Path, f.Err)
	}
	if f.Legacy {
		return fmt.Sprintf("%s: legacy file (no seal): nothing signed", f.Path)
	}
	ok, signed := 0, 0
	who := map[string]bool{}
	var names []string
	for _, s := range f.Sessions {
		if s.Signed {
			signed++
		}
		if s.OK {
			ok++
			if !who[s.Principal] {
				who[s.Principal] = true
				names = append(names, s.Principal)
			}
		}
	}
	msg := fmt.Sprintf("%s: %d of %d sessions signed, %d verified", f.Path, signed, len(f.Sessions), ok)
	if len(names) > 0 {
		msg += " (signed by " + strings.Join(names, ", ") + ")"
	}
	if len(f.Orphans) > 0 {
		msg += fmt.Sprintf("; %d signatures of seals not in the file", len(f.Orphans))
	}
	return msg
}
