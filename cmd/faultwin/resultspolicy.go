package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"faultwin/reports/rows"
)

// The policy of results/ (results/README.md): a file stays when a doc, a
// finding, an expected-outcomes file or a test cites it, when it is the
// newest soak of its supervisor and variant, or when it is under a
// directory kept whole; every other file is removed (git history keeps
// it).

// keptWhole are results/ subdirectories kept whole: the refsup pass's
// logs the docs cite, one file per mutant switch, one per explored family.
var keptWhole = []string{"logs", "mutants", "explore"}

// citingGlobs are the files, relative to the repository, whose citations
// keep a results file.
var citingGlobs = []string{"*.md", "docs/*.md", "docs/*/*.md", "windows/*/expected/outcomes.yaml"}

// citedToken is a results path as the docs write it: results/sup/x.jsonl.gz,
// results/sup/ab-10-c.passes-{1-5,6-10}.jsonl.gz, results/sup/soak-10-c
// (no extension) or a bare file name such as soak-5.jsonl.gz.
var citedToken = regexp.MustCompile(`results/[A-Za-z0-9_./{},-]+|[A-Za-z0-9_.-]+\.jsonl(?:\.gz)?`)

// citations maps each file under dir (as "results/..." relative to the
// repository) to the files that cite it.
func citations(repo, dir string, files []string) (map[string][]string, error) {
	var citing []string
	for _, g := range citingGlobs {
		m, err := filepath.Glob(filepath.Join(repo, g))
		if err != nil {
			return nil, err
		}
		citing = append(citing, m...)
	}
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "out" || p == dir):
			return filepath.SkipDir
		case strings.HasSuffix(p, ".go"):
			citing = append(citing, p) // tests read results files by name
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	base := map[string][]string{}
	for _, f := range files {
		base[filepath.Base(f)] = append(base[filepath.Base(f)], f)
	}
	out := map[string][]string{}
	for _, c := range slices.Compact(slices.Sorted(slices.Values(citing))) {
		b, err := os.ReadFile(c)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(repo, c)
		for _, tok := range citedToken.FindAll(b, -1) {
			for _, t := range expandBraces(string(bytes.TrimRight(tok, ".,")), 0) {
				var hits []string
				if strings.HasPrefix(t, "results/") {
					for _, f := range files {
						if f == t || f == t+".jsonl" || f == t+".jsonl.gz" {
							hits = append(hits, f)
						}
					}
				} else if !strings.HasSuffix(rel, ".go") {
					hits = base[t] // a bare name in a doc: every file of that name
				}
				for _, h := range hits {
					if !slices.Contains(out[h], rel) {
						out[h] = append(out[h], rel)
					}
				}
			}
		}
	}
	return out, nil
}

// expandBraces expands the first {a,b} of s, then the rest.
func expandBraces(s string, depth int) []string {
	i := strings.IndexByte(s, '{')
	j := strings.IndexByte(s, '}')
	if i < 0 || j < i || depth > 4 {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[i+1:j], ",") {
		out = append(out, expandBraces(s[:i]+alt+s[j+1:], depth+1)...)
	}
	return out
}

// soakName reads a rows file's name: a variant, a pass count and a
// commit, and an optional part (soak-10-a73a452, ab-10-4e1e38b.passes-1-5,
// sup-latest-10-66b8ec8, soak-5).
var soakName = regexp.MustCompile(`^(.+?)-([0-9]+)(?:-([0-9a-f]{7,40}))?(\.passes-[0-9]+-[0-9]+)?\.jsonl(?:\.gz)?$`)

// decision is what the policy says of one file.
type decision struct {
	path   string // "results/..." relative to the repository
	keep   bool
	why    string
	rows   int
	finish time.Time
}

// decide applies the policy to every file under dir.
func decide(repo, dir string) ([]decision, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".pack-") || strings.HasPrefix(d.Name(), ".strip-") {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	cited, err := citations(repo, dir, files)
	if err != nil {
		return nil, err
	}
	top, _ := filepath.Rel(repo, dir)
	ds := make([]decision, len(files))
	newest := map[string]int{} // supervisor and variant to its newest file's index
	for i, f := range files {
		d := decision{path: f}
		inDir := strings.TrimPrefix(f, filepath.ToSlash(top)+"/")
		sub, name := "refsup", inDir
		if k := strings.IndexByte(inDir, '/'); k >= 0 {
			sub, name = inDir[:k], inDir[k+1:]
		}
		switch {
		case len(cited[f]) > 0:
			d.keep, d.why = true, "cited by "+strings.Join(cited[f], ", ")
		case slices.Contains(keptWhole, sub):
			d.keep, d.why = true, "under "+top+"/"+sub+"/, kept whole"
		case !isRowsName(name):
			d.keep, d.why = true, "not a rows file"
		}
		if m := soakName.FindStringSubmatch(filepath.Base(name)); m != nil && isRowsName(name) && !slices.Contains(keptWhole, sub) {
			rs, err := rows.Read(filepath.Join(repo, f))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			d.rows = len(rs)
			for _, r := range rs {
				if r.Run.Finished.After(d.finish) {
					d.finish = r.Run.Finished
				}
			}
			key := sub + " " + m[1]
			if j, ok := newest[key]; !ok || d.finish.After(ds[j].finish) {
				newest[key] = i
			}
		}
		ds[i] = d
	}
	for key, i := range newest {
		sub, variant, _ := strings.Cut(key, " ")
		part := soakName.FindStringSubmatch(filepath.Base(files[i]))[4]
		head := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(files[i], ".gz"), ".jsonl"), part)
		for j := range ds {
			if ds[j].path == files[i] || (part != "" && strings.HasPrefix(ds[j].path, head+".passes-")) {
				why := fmt.Sprintf("the newest %s %s (rows finished %s)", sub, variant, ds[i].finish.UTC().Format(time.DateOnly))
				if ds[j].keep {
					ds[j].why += "; " + why
				} else {
					ds[j].keep, ds[j].why = true, why
				}
			}
		}
	}
	for i := range ds {
		if !ds[i].keep {
			ds[i].why = "not cited, not the newest of its supervisor and variant, not under a directory kept whole"
		}
	}
	return ds, nil
}
