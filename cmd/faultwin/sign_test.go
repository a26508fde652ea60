package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
	"faultwin/reports/sigs"
)

// sshKey makes a throwaway ed25519 key in dir and an allowed_signers file
// naming it as principal; it returns the key and the allowed_signers path.
func sshKey(t *testing.T, dir, principal string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("no ssh-keygen on PATH: make deps installs it (openssh-client)")
	}
	key := filepath.Join(dir, principal+"_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(dir, principal+"_allowed_signers")
	if err := os.WriteFile(allowed, []byte(principal+" "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	return key, allowed
}

// rechain drops row drop (0-based) of path and writes the rest again with
// the rows package, as a tamperer with this code would: the new file's
// chain and seal verify.
func rechain(t *testing.T, path string, drop int) {
	t.Helper()
	rs, err := rows.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	kept := append(append([]rows.Row{}, rs[:drop]...), rs[drop+1:]...)
	for i := range kept {
		kept[i].Prev, kept[i].Hash = "", ""
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := replaytest.Write(path, kept...); err != nil {
		t.Fatal(err)
	}
}

func TestSignAndVerify(t *testing.T) {
	keys := t.TempDir()
	key, allowed := sshKey(t, keys, "alice@nightly")
	_, otherAllowed := sshKey(t, keys, "mallory")
	dir := t.TempDir()
	fail := replaytest.Input(replaytest.W4Survivor)
	path, _ := fixtureFile(t, dir, "run.jsonl", passIn("W3_30"), fail, passIn("W4_30"))

	// Unsigned: replay without --signers is unchanged; with --signers an
	// unsigned session is reported, rejected only with --require-signed.
	if out, code, err := runVerb(t, "replay", "--signers", allowed, path); code != 0 {
		t.Fatalf("unsigned, not required: exit %d (%v)\n%s", code, err, out)
	}
	out, code, err := runVerb(t, "replay", "--signers", allowed, "--require-signed", path)
	if code != exitUnverified || !strings.Contains(err.Error(), path+": session at line 1 (seal ") || !strings.Contains(err.Error(), "unsigned") {
		t.Fatalf("unsigned, required: exit %d (%v)\n%s", code, err, out)
	}

	out, code, err = runVerb(t, "sign", "--key", key, path)
	if code != 0 || !strings.Contains(out, "signed 1 seal, 0 signed before") {
		t.Fatalf("sign: exit %d (%v)\n%s", code, err, out)
	}
	sig, err := os.ReadFile(sigs.Path(path))
	if err != nil || !strings.Contains(string(sig), "-----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("%s: %v\n%s", sigs.Path(path), err, sig)
	}
	// Signing again changes nothing.
	if out, code, _ := runVerb(t, "sign", "--key", key, path); code != 0 || !strings.Contains(out, "signed 0 seals, 1 signed before") {
		t.Errorf("sign again: exit %d\n%s", code, out)
	}
	if again, _ := os.ReadFile(sigs.Path(path)); string(again) != string(sig) {
		t.Error("signing again rewrote the signatures")
	}
	out, code, err = runVerb(t, "replay", "--signers", allowed, "--require-signed", path)
	if code != 0 || !strings.Contains(out, "1 of 1 sessions signed, 1 verified (signed by alice@nightly)") {
		t.Fatalf("signed: exit %d (%v)\n%s", code, err, out)
	}
	// ssh-keygen itself verifies the signature over sigs.Message(seal).
	c, err := rows.ReadContents(path)
	if err != nil {
		t.Fatal(err)
	}
	seal := c.Markers[len(c.Markers)-1]
	sigFile := filepath.Join(t.TempDir(), "one.sig")
	os.WriteFile(sigFile, sig[strings.Index(string(sig), "-----BEGIN"):], 0o644)
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "alice@nightly", "-n", "faultwin-rows", "-s", sigFile)
	cmd.Stdin = strings.NewReader(string(sigs.Message(seal)))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("ssh-keygen -Y verify by hand: %v: %s", err, b)
	}

	// Signed by a key not in the allowed signers.
	_, code, err = runVerb(t, "replay", "--signers", otherAllowed, path)
	if code != exitUnverified || !strings.Contains(err.Error(), path+": session at line 1") || !strings.Contains(err.Error(), "signed by a key that is not in "+otherAllowed) {
		t.Errorf("other signer: exit %d (%v)", code, err)
	}

	// The FAIL row dropped and the rest written again with the rows
	// package: plain replay accepts it (the reason to sign), a signature
	// check does not.
	rechain(t, path, 1)
	if out, code, err := runVerb(t, "replay", path); code != 0 {
		t.Fatalf("re-chained file without --signers: exit %d (%v), want 0 (a chain alone cannot tell)\n%s", code, err, out)
	}
	_, code, err = runVerb(t, "replay", "--signers", allowed, path)
	if code != exitUnverified || !strings.Contains(err.Error(), "which the file does not hold: the file was changed after it was signed") {
		t.Errorf("re-chained: exit %d (%v)", code, err)
	}
	_, code, err = runVerb(t, "replay", "--signers", allowed, "--require-signed", path)
	if code != exitUnverified || !strings.Contains(err.Error(), "unsigned") || !strings.Contains(err.Error(), "changed after it was signed") {
		t.Errorf("re-chained, required: exit %d (%v)", code, err)
	}
	// The tamperer also points the old signature at the new seal: the
	// signature does not verify over it.
	c, err = rows.ReadContents(path)
	if err != nil {
		t.Fatal(err)
	}
	newSeal := c.Markers[len(c.Markers)-1].Hash
	forged := strings.Replace(string(sig), seal.Hash, newSeal, 1)
	if err := os.WriteFile(sigs.Path(path), []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	_, code, err = runVerb(t, "replay", "--signers", allowed, path)
	if code != exitUnverified || !strings.Contains(err.Error(), "the signature does not verify over this seal's content") {
		t.Errorf("signature moved to the re-chained seal: exit %d (%v)", code, err)
	}
}

// A file of two sessions: signing after the second signs its seal only;
// a session cut from the end leaves a signature of a seal the file no
// longer holds.
func TestSignSessions(t *testing.T) {
	key, allowed := sshKey(t, t.TempDir(), "ci")
	dir := t.TempDir()
	path, _ := fixtureFile(t, dir, "two.jsonl.gz", passIn("W3_30"))
	if _, code, err := runVerb(t, "sign", "--key", key, dir); code != 0 {
		t.Fatalf("sign dir: %d %v", code, err)
	}
	size, _ := os.Stat(path)
	if _, err := replaytest.Write(path, replaytest.Row(passIn("W4_30"), replaytest.Prov{Commit: "d25cf84", Started: t0, Load: 0.5})); err != nil {
		t.Fatal(err)
	}
	// The unsigned second session fails only when required.
	if _, code, err := runVerb(t, "replay", "--signers", allowed, path); code != 0 {
		t.Errorf("second session unsigned: %d %v", code, err)
	}
	if _, code, err := runVerb(t, "replay", "--signers", allowed, "--require-signed", path); code != exitUnverified || !strings.Contains(err.Error(), "unsigned") {
		t.Errorf("second session unsigned, required: %d %v", code, err)
	}
	out, code, err := runVerb(t, "sign", "--key", key, path)
	if code != 0 || !strings.Contains(out, "signed 1 seal, 1 signed before") {
		t.Fatalf("sign second session: %d %v\n%s", code, err, out)
	}
	if out, code, err := runVerb(t, "replay", "--signers", allowed, "--require-signed", path); code != 0 || !strings.Contains(out, "2 of 2 sessions signed, 2 verified") {
		t.Errorf("both signed: %d %v\n%s", code, err, out)
	}
	// Cut the second session off: the first still verifies, the second's
	// signature names a seal the file no longer holds.
	if err := os.Truncate(path, size.Size()); err != nil {
		t.Fatal(err)
	}
	if _, code, err := runVerb(t, "replay", "--signers", allowed, path); code != exitUnverified || !strings.Contains(err.Error(), "sessions cut from its end") {
		t.Errorf("second session cut: %d %v", code, err)
	}
}

// An old checked-in file replays as recorded without --signers, .sig or
// not; with --require-signed it is rejected as unsigned.
func TestOldFileUnsigned(t *testing.T) {
	old := "../../results/podman/soak-10-5cffb9b.jsonl.gz"
	if _, err := os.Stat(sigs.Path(old)); err == nil {
		t.Fatalf("%s is signed now: this test needs an unsigned checked-in file, name another", old)
	}
	out, code, err := runVerb(t, "replay", old)
	if code != 0 || !strings.Contains(out, "every chain holds") {
		t.Fatalf("%s: exit %d (%v)", old, code, err)
	}
	_, allowed := sshKey(t, t.TempDir(), "ci")
	if _, code, err := runVerb(t, "replay", "--signers", allowed, old); code != 0 {
		t.Errorf("%s --signers: exit %d (%v)", old, code, err)
	}
	if _, code, err := runVerb(t, "replay", "--signers", allowed, "--require-signed", old); code != exitUnverified || !strings.Contains(err.Error(), old+": session at line 1") {
		t.Errorf("%s --require-signed: exit %d (%v)", old, code, err)
	}
	// The legacy file has no seal to sign.
	if _, code, err := runVerb(t, "replay", "--signers", allowed, "--require-signed", "../../results/windows.jsonl"); code != exitUnverified || !strings.Contains(err.Error(), "legacy file") {
		t.Errorf("legacy --require-signed: exit %d (%v)", code, err)
	}
}

// merge takes the same flags: signed shards merge, an unsigned one is
// named when signatures are required.
func TestMergeSigned(t *testing.T) {
	key, allowed := sshKey(t, t.TempDir(), "ci")
	dir := t.TempDir()
	var paths []string
	for k := 1; k <= 2; k++ {
		p, _, err := shardRun(t, dir, fmt.Sprintf("s%d.jsonl", k), &review.Shard{K: k, N: 2}, 2, clean("5e45759"), func(p review.Pair) criteria.Input { return passIn(p.Window) })
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if _, code, err := runVerb(t, "sign", "--key", key, paths[0]); code != 0 {
		t.Fatal(code, err)
	}
	args := append([]string{"merge", "--signers", allowed, "--require-signed"}, paths...)
	out, code, err := runVerb(t, args...)
	if code != exitUnverified || !strings.Contains(err.Error(), paths[1]+": session at line 1") || strings.Contains(err.Error(), paths[0]+":") {
		t.Errorf("one shard unsigned: exit %d (%v)\n%s", code, err, out)
	}
	if _, code, err := runVerb(t, "sign", "--key", key, paths[1]); code != 0 {
		t.Fatal(code, err)
	}
	if out, code, err := runVerb(t, args...); code != 0 {
		t.Errorf("both signed: exit %d (%v)\n%s", code, err, out)
	}
}

// The nightly workflow signs each shard's rows when the signing key secret
// is set, uploads the signatures beside them, and the merge job requires
// them when allowed signers are configured.
func TestNightlySoakSigns(t *testing.T) {
	d := yamlDocs(t, workflowFile)[0]
	soak := dig(t, d, "jobs", "soak")
	if have := fmt.Sprint(dig(t, soak, "env", "HAVE_SIGNING_KEY")); !strings.Contains(have, "secrets.FAULTWIN_SIGNING_KEY != ''") {
		t.Errorf("soak job env HAVE_SIGNING_KEY = %q", have)
	}
	var signed, uploaded bool
	for _, st := range dig(t, soak, "steps").([]any) {
		m := st.(map[string]any)
		run, _ := m["run"].(string)
		if strings.Contains(run, "faultwin sign") {
			signed = true
			if cond := fmt.Sprint(m["if"]); !strings.Contains(cond, "env.HAVE_SIGNING_KEY == 'true'") {
				t.Errorf("sign step runs without the key secret: if %q", cond)
			}
			checkFlags(t, "workflow sign step", run, "sign", "key")
		}
		if u, _ := m["uses"].(string); strings.HasPrefix(u, "actions/upload-artifact") {
			uploaded = strings.Contains(fmt.Sprint(m["with"].(map[string]any)["path"]), "results-shard-${{ matrix.shard }}.jsonl.sig")
		}
	}
	if !signed || !uploaded {
		t.Errorf("soak job: sign step %v, .sig uploaded %v", signed, uploaded)
	}
	verified := false
	for _, st := range dig(t, d, "jobs", "merge", "steps").([]any) {
		m := st.(map[string]any)
		if run, _ := m["run"].(string); strings.Contains(run, "faultwin replay") {
			verified = strings.Contains(fmt.Sprint(m["if"]), "vars.FAULTWIN_ALLOWED_SIGNERS != ''")
			checkFlags(t, "workflow signature step", run, "replay", "signers", "require-signed")
		}
	}
	if !verified {
		t.Error("merge job: no signature check guarded by the allowed signers variable")
	}
}
