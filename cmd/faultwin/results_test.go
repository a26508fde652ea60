package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// TestResultsCitedFilesExist: every results/ file a doc, a finding or an
// expected-outcomes file cites is in results/ (pruning must not remove it).
func TestResultsCitedFilesExist(t *testing.T) {
	repo := filepath.Join("..", "..")
	var citing []string
	for _, g := range []string{"docs/*.md", "docs/*/*.md", "windows/*/expected/outcomes.yaml"} {
		m, _ := filepath.Glob(filepath.Join(repo, g))
		citing = append(citing, m...)
	}
	path := regexp.MustCompile(`results/[A-Za-z0-9_./{},-]*[A-Za-z0-9}]`)
	n := 0
	for _, c := range citing {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range path.FindAllIndex(b, -1) {
			if bytes.HasSuffix(b[:at[0]], []byte("--results ")) {
				continue // a command line naming the file it writes
			}
			for _, p := range expandBraces(string(b[at[0]:at[1]]), 0) {
				if p == "results/mysup" || strings.HasPrefix(p, "results/mysup/") {
					continue // the tutorial's own supervisor, a name to copy
				}
				n++
				found := false
				for _, cand := range []string{p, p + ".jsonl", p + ".jsonl.gz"} {
					if _, err := os.Stat(filepath.Join(repo, cand)); err == nil {
						found = true
					}
				}
				if !found {
					t.Errorf("%s cites %s, which is not in results/", c, p)
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("found %d citations of results/ files; the docs cite more: is the pattern right?", n)
	}
}

// pruneTree writes a repository with results/sup/ holding the same row
// finished on four days, one of them cited by a doc.
func pruneTree(t *testing.T) string {
	t.Helper()
	src, err := rows.Read(filepath.Join("..", "..", "results", "mutants", "leave-ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for i, name := range []string{"soak-10-aaaaaaa", "soak-10-bbbbbbb", "soak-10-ccccccc", "ab-5-ddddddd"} {
		p := filepath.Join(repo, "results", "sup", name+".jsonl.gz")
		os.MkdirAll(filepath.Dir(p), 0o755)
		w, err := rows.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		r := src[0]
		r.Prev, r.Hash = "", ""
		r.Run.Finished = time.Date(2026, 12, 1+i, 0, 0, 0, 0, time.UTC)
		r.Logs = map[string]string{"refsup.log": strings.Repeat("serve\n", 1000)}
		r.Input = withSweepRaw(t, r.Input)
		if err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
		if err := w.Seal("test"); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	os.MkdirAll(filepath.Join(repo, "docs"), 0o755)
	os.WriteFile(filepath.Join(repo, "docs", "a.md"), []byte("In `results/sup/soak-10-aaaaaaa.jsonl.gz` W1 fails.\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "results", "logs", "W1"), 0o755)
	os.WriteFile(filepath.Join(repo, "results", "logs", "W1", "serve.log"), []byte("x\n"), 0o644)
	return repo
}

// withSweepRaw gives the input's first sweep the supervisor's raw output.
func withSweepRaw(t *testing.T, input json.RawMessage) json.RawMessage {
	t.Helper()
	var all map[string]json.RawMessage
	if err := json.Unmarshal(input, &all); err != nil {
		t.Fatal(err)
	}
	var sweep map[string]json.RawMessage
	if err := json.Unmarshal(all["sweep1"], &sweep); err != nil {
		t.Fatal(err)
	}
	sweep["raw"] = json.RawMessage(`{"swept":["a","b"]}`)
	b, _ := json.Marshal(sweep)
	all["sweep1"] = b
	out, _ := json.Marshal(all)
	if !rows.HasStrippable(rows.Row{Input: out}) {
		t.Fatal("the test row has no sweep output to drop")
	}
	return out
}

func TestResultsPrune(t *testing.T) {
	repo := pruneTree(t)
	dir := filepath.Join(repo, "results")
	var out bytes.Buffer
	if err := run(context.Background(), &out, []string{"results", "prune", "--dry-run", dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sup", "soak-10-bbbbbbb.jsonl.gz")); err != nil {
		t.Fatalf("--dry-run removed a file: %v", err)
	}
	out.Reset()
	if err := run(context.Background(), &out, []string{"results", "prune", dir}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"sup/soak-10-aaaaaaa.jsonl.gz": "cited by docs/a.md",
		"sup/soak-10-ccccccc.jsonl.gz": "the newest sup soak",
		"sup/ab-5-ddddddd.jsonl.gz":    "the newest sup ab",
		"logs/W1/serve.log":            "kept whole",
		"sup/soak-10-bbbbbbb.jsonl.gz": "",
	}
	for f, why := range want {
		_, err := os.Stat(filepath.Join(dir, f))
		switch {
		case why == "" && err == nil:
			t.Errorf("%s is neither cited nor the newest, but was kept:\n%s", f, out.String())
		case why != "" && err != nil:
			t.Errorf("%s (%s) was removed:\n%s", f, why, out.String())
		case why != "" && !strings.Contains(out.String(), "results/"+f+": ") || !strings.Contains(out.String(), why):
			t.Errorf("the listing does not say %s of %s:\n%s", why, f, out.String())
		}
		if why != "" && strings.HasSuffix(f, ".gz") {
			if packed, _ := rows.IsPacked(filepath.Join(dir, f)); !packed {
				t.Errorf("%s was kept but not packed", f)
			}
			c, err := rows.VerifyContents(filepath.Join(dir, f))
			if err != nil {
				t.Errorf("%s does not verify after packing: %v", f, err)
				continue
			}
			if rows.HasOutput(c.Rows) {
				t.Errorf("%s keeps supervisor output no criterion reads", f)
			}
			if rp := review.ReplayContents(c); !rp.OK() {
				t.Errorf("%s does not replay cleanly after pruning: %+v", f, rp.Diffs)
			}
		}
	}
	if !strings.Contains(out.String(), "remove results/sup/soak-10-bbbbbbb.jsonl.gz: not cited") {
		t.Errorf("the listing does not say why soak-10-bbbbbbb goes:\n%s", out.String())
	}
}
