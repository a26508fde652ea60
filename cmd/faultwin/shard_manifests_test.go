package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The ready-to-use definitions of a sharded soak: a GitHub Actions matrix
// and a Kubernetes Indexed Job, each followed by a merge.
const (
	workflowFile = "../../.github/workflows/nightly-soak.yml"
	jobFile      = "../../deploy/kubernetes/soak-indexed-job.yaml"
	mergeJobFile = "../../deploy/kubernetes/soak-merge-job.yaml"
	pvcFile      = "../../deploy/kubernetes/results-pvc.yaml"
)

// yamlDocs parses every document of a YAML file.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, d)
	}
}

// dig walks maps and lists: dig(d, "spec", "template", "containers", 0).
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for i, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not a map: %v", path[:i], v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("no %v", path[:i+1])
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: no item %d in %v", path[:i], k, v)
			}
			v = l[k]
		}
	}
	return v
}

// faultwinFlags returns every --flag a manifest passes to `faultwin VERB`.
func faultwinFlags(cmd, verb string) []string {
	i := strings.Index(cmd, "faultwin "+verb)
	if i < 0 {
		return nil
	}
	rest := cmd[i:]
	if j := strings.IndexAny(rest, "\n;|&"); j >= 0 && !strings.HasSuffix(strings.TrimSpace(rest[:j]), "\\") {
		rest = rest[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?:^|\s)(--?[a-z][a-z-]*)`).FindAllStringSubmatch(rest, -1) {
		out = append(out, strings.TrimLeft(m[1], "-"))
	}
	return out
}

// checkFlags fails if a manifest passes a flag the verb does not have.
func checkFlags(t *testing.T, where, cmd, verb string, need ...string) {
	t.Helper()
	help, _, _ := runVerb(t, verb, "-h")
	got := faultwinFlags(cmd, verb)
	if len(got) == 0 {
		t.Errorf("%s: no `faultwin %s` in %q", where, verb, cmd)
	}
	for _, f := range got {
		if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f) + `\b`).MatchString(help) {
			t.Errorf("%s: `faultwin %s` has no flag -%s (%q)", where, verb, f, cmd)
		}
	}
	for _, f := range need {
		found := false
		for _, g := range got {
			found = found || g == f
		}
		if !found {
			t.Errorf("%s: `faultwin %s` without --%s: %q", where, verb, f, cmd)
		}
	}
}

// noRegistryHost: the definitions name no host at all (no URL, no dotted
// domain), so no package or image registry is named: images and modules
// come from wherever the cluster or runner is configured to fetch them.
func noRegistryHost(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("://")) {
		t.Errorf("%s holds a URL", path)
	}
	// Kubernetes' own label namespaces (app.kubernetes.io/name,
	// kubernetes.io/hostname) look like domains but name no host.
	b = kubeLabel.ReplaceAll(b, nil)
	if m := hostLike.Find(b); m != nil {
		t.Errorf("%s names a host (%s)", path, m)
	}
}

var kubeLabel = regexp.MustCompile(`\b([a-z0-9-]+\.)*kubernetes\.io/`)

// hostLike matches a dotted domain name such as example.io or a.b.com.
var hostLike = regexp.MustCompile(`\b[a-z0-9-]+(\.[a-z0-9-]+)*\.(io|org|com|net|dev|cloud|sh)\b`)

func TestNightlySoakWorkflow(t *testing.T) {
	noRegistryHost(t, workflowFile)
	d := yamlDocs(t, workflowFile)[0]
	if cron, _ := dig(t, d, "on", "schedule", 0, "cron").(string); len(strings.Fields(cron)) != 5 {
		t.Errorf("schedule cron %q", cron)
	}
	soak := dig(t, d, "jobs", "soak")
	runsOn := fmt.Sprint(dig(t, soak, "runs-on"))
	if !strings.Contains(runsOn, "self-hosted") || !strings.Contains(runsOn, "linux") {
		t.Errorf("soak runs-on %s: want self-hosted Linux runners (root, privileged)", runsOn)
	}
	if ff := dig(t, soak, "strategy", "fail-fast"); ff != false {
		t.Errorf("fail-fast %v: one shard's FAIL would cancel the others", ff)
	}
	shards, _ := dig(t, soak, "strategy", "matrix", "shard").([]any)
	if len(shards) < 2 {
		t.Errorf("matrix.shard %v: want at least 2 shards", shards)
	}
	for i, s := range shards {
		if s != i+1 {
			t.Errorf("matrix.shard %v: want 1..n in order", shards)
			break
		}
	}
	var runs []string
	uses := map[string]map[string]any{}
	for _, st := range dig(t, soak, "steps").([]any) {
		m := st.(map[string]any)
		if r, ok := m["run"].(string); ok {
			runs = append(runs, r)
		}
		if u, ok := m["uses"].(string); ok {
			w, _ := m["with"].(map[string]any)
			uses[strings.Split(u, "@")[0]] = w
		}
	}
	all := strings.Join(runs, "\n")
	if !strings.Contains(all, "sudo make deps build") {
		t.Errorf("soak job: no `sudo make deps build` in %q", all)
	}
	if _, ok := uses["actions/checkout"]; !ok {
		t.Error("soak job: no checkout")
	}
	if w := uses["actions/checkout"]; w == nil || w["fetch-depth"] != 0 {
		t.Errorf("soak job: checkout %v: want fetch-depth 0 (rows record each window's registration commit from history)", w)
	}
	var soakCmd string
	for _, r := range runs {
		if strings.Contains(r, "faultwin soak") {
			soakCmd = r
		}
	}
	if !strings.Contains(soakCmd, "sudo bin/faultwin soak") || !strings.Contains(soakCmd, "--shard ${{ matrix.shard }}/${{ strategy.job-total }}") ||
		!strings.Contains(soakCmd, "--results out/results-shard-${{ matrix.shard }}.jsonl") {
		t.Errorf("soak job: soak command %q", soakCmd)
	}
	checkFlags(t, "workflow soak job", soakCmd, "soak", "n", "shard", "results")
	if w := uses["actions/upload-artifact"]; w == nil || !strings.Contains(fmt.Sprint(w["name"]), "${{ matrix.shard }}") ||
		!strings.Contains(fmt.Sprint(w["path"]), "results-shard-${{ matrix.shard }}.jsonl") {
		t.Errorf("soak job: upload %v", w)
	}

	merge := dig(t, d, "jobs", "merge")
	if needs := fmt.Sprint(dig(t, merge, "needs")); !strings.Contains(needs, "soak") {
		t.Errorf("merge job needs %s", needs)
	}
	var mergeCmd string
	downloaded := false
	for _, st := range dig(t, merge, "steps").([]any) {
		m := st.(map[string]any)
		if r, ok := m["run"].(string); ok && strings.Contains(r, "faultwin merge") {
			mergeCmd = r
		}
		if u, _ := m["uses"].(string); strings.HasPrefix(u, "actions/download-artifact") {
			downloaded = true
			if p := fmt.Sprint(m["with"].(map[string]any)["pattern"]); p != "results-shard-*" {
				t.Errorf("merge job downloads %s", p)
			}
		}
	}
	if !downloaded || !strings.Contains(mergeCmd, "bin/faultwin merge") || !strings.Contains(mergeCmd, ".jsonl") {
		t.Errorf("merge job: downloaded %v, merge %q", downloaded, mergeCmd)
	}
	checkFlags(t, "workflow merge job", mergeCmd, "merge", "out")
}

func TestSoakIndexedJob(t *testing.T) {
	for _, f := range []string{jobFile, mergeJobFile, pvcFile} {
		noRegistryHost(t, f)
	}
	pvc := yamlDocs(t, pvcFile)
	if len(pvc) != 1 || pvc[0]["kind"] != "PersistentVolumeClaim" || dig(t, pvc[0], "metadata", "name") != "faultwin-results" ||
		fmt.Sprint(dig(t, pvc[0], "spec", "accessModes")) != "[ReadWriteMany]" {
		t.Errorf("%s: want one ReadWriteMany PVC faultwin-results: %v", pvcFile, pvc)
	}

	docs := yamlDocs(t, jobFile)
	if len(docs) != 1 || docs[0]["kind"] != "Job" || docs[0]["apiVersion"] != "batch/v1" {
		t.Fatalf("%s: want one batch/v1 Job", jobFile)
	}
	job := docs[0]
	spec := dig(t, job, "spec")
	n := dig(t, spec, "completions")
	if dig(t, spec, "completionMode") != "Indexed" || n != dig(t, spec, "parallelism") || n.(int) < 2 {
		t.Errorf("Job: completionMode %v, completions %v, parallelism %v: want Indexed, completions = parallelism >= 2",
			dig(t, spec, "completionMode"), n, dig(t, spec, "parallelism"))
	}
	pod := dig(t, spec, "template", "spec")
	if dig(t, pod, "restartPolicy") != "Never" || dig(t, pod, "hostPID") != true {
		t.Errorf("pod: restartPolicy %v hostPID %v", dig(t, pod, "restartPolicy"), dig(t, pod, "hostPID"))
	}
	podLabel := dig(t, spec, "template", "metadata", "labels", "app.kubernetes.io/name")
	anti := dig(t, pod, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", 0)
	if dig(t, anti, "topologyKey") != "kubernetes.io/hostname" || dig(t, anti, "labelSelector", "matchLabels", "app.kubernetes.io/name") != podLabel {
		t.Errorf("pod anti-affinity %v: want one shard per node (kubernetes.io/hostname, the pods' own label %v)", anti, podLabel)
	}
	c := dig(t, pod, "containers", 0)
	if dig(t, c, "securityContext", "privileged") != true {
		t.Error("soak container not privileged")
	}
	env := map[string]any{}
	for _, e := range dig(t, c, "env").([]any) {
		m := e.(map[string]any)
		env[m["name"].(string)] = m["value"]
	}
	if env["SHARDS"] != fmt.Sprint(n) {
		t.Errorf("SHARDS %v, completions %v: want equal", env["SHARDS"], n)
	}
	script := dig(t, c, "args", 0).(string)
	if !strings.Contains(script, "JOB_COMPLETION_INDEX + 1") {
		t.Errorf("soak script does not map JOB_COMPLETION_INDEX to shard index+1:\n%s", script)
	}
	checkFlags(t, "Indexed Job", script, "soak", "n", "shard", "results")
	claim := func(pod any) string {
		for _, v := range dig(t, pod, "volumes").([]any) {
			if p, ok := v.(map[string]any)["persistentVolumeClaim"].(map[string]any); ok {
				return fmt.Sprint(p["claimName"])
			}
		}
		return ""
	}
	if claim(pod) != "faultwin-results" {
		t.Errorf("soak Job writes to claim %q", claim(pod))
	}
	// The script itself: shard index+1 of SHARDS, into the run's directory.
	got := runScript(t, script, map[string]string{"JOB_COMPLETION_INDEX": "2", "SHARDS": fmt.Sprint(env["SHARDS"]), "PASSES": "20", "JOB_NAME": "faultwin-soak-x7k2p"})
	want := fmt.Sprintf("soak -n 20 --shard 3/%v --results RESULTS/faultwin-soak-x7k2p/results-shard-3.jsonl", n)
	if !strings.Contains(got, want) {
		t.Errorf("soak script ran\n%s\nwant %q", got, want)
	}

	mdocs := yamlDocs(t, mergeJobFile)
	if len(mdocs) != 1 || mdocs[0]["kind"] != "Job" {
		t.Fatalf("%s: want one Job", mergeJobFile)
	}
	mpod := dig(t, mdocs[0], "spec", "template", "spec")
	mc := dig(t, mpod, "containers", 0)
	mscript := dig(t, mc, "args", 0).(string)
	checkFlags(t, "merge Job", mscript, "merge", "out")
	if claim(mpod) != "faultwin-results" {
		t.Errorf("merge Job reads claim %q", claim(mpod))
	}
	got = runScript(t, mscript, map[string]string{"SOAK_JOB": "faultwin-soak-x7k2p"})
	if !strings.Contains(got, "merge --out RESULTS/faultwin-soak-x7k2p/SUMMARY.md RESULTS/faultwin-soak-x7k2p/results-shard-1.jsonl RESULTS/faultwin-soak-x7k2p/results-shard-2.jsonl") {
		t.Errorf("merge script ran\n%s", got)
	}
}

// runScript runs a container's script with a stand-in bin/faultwin that
// prints its arguments, /results moved to a temporary directory (printed
// as RESULTS), and two shard files there for the merge's glob.
func runScript(t *testing.T, script string, env map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	for _, k := range []int{1, 2} {
		p := filepath.Join(results, "faultwin-soak-x7k2p", fmt.Sprintf("results-shard-%d.jsonl", k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "faultwin"), []byte("#!/bin/sh\necho \"$*\"\n"), 0o755)
	// Both scripts set dir="/results/${...}".
	if !strings.Contains(script, `dir="/results/`) {
		t.Fatalf("script does not set dir=\"/results/...\":\n%s", script)
	}
	cmd := exec.Command("/bin/bash", "-c", strings.ReplaceAll(script, `dir="/results/`, `dir="`+results+`/`))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	return strings.ReplaceAll(string(out), results, "RESULTS")
}
