package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	classFile    = "../../deploy/kubernetes/runtime-class.yaml"
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
	// Kubernetes' own label namespaces and API groups
	// (app.kubernetes.io/name, kubernetes.io/hostname, node.k8s.io/v1)
	// look like domains but name no host.
	b = kubeLabel.ReplaceAll(b, nil)
	if m := hostLike.Find(b); m != nil {
		t.Errorf("%s names a host (%s)", path, m)
	}
}

var kubeLabel = regexp.MustCompile(`\b([a-z0-9-]+\.)*(kubernetes|k8s)\.io/`)

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
	for _, f := range []string{jobFile, mergeJobFile, pvcFile, classFile} {
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
		if m["name"] == "SHARDS" {
			// n is the pods' annotation, read by the downward API.
			env["SHARDS"] = dig(t, spec, "template", "metadata", "annotations", "faultwin/shards")
			if f := dig(t, m, "valueFrom", "fieldRef", "fieldPath"); f != "metadata.annotations['faultwin/shards']" {
				t.Errorf("SHARDS from %v, want the pod annotation faultwin/shards", f)
			}
		}
	}
	if env["SHARDS"] != fmt.Sprint(n) {
		t.Errorf("SHARDS (annotation faultwin/shards) %v, completions %v: want equal", env["SHARDS"], n)
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

// TestSoakJobNarrowed: a user narrows or shortens a soak through the Job's
// env, PASSES and LABEL_FILTER, without editing its script; shipped, the
// filter is empty and the soak runs every window.
func TestSoakJobNarrowed(t *testing.T) {
	var soak kubeJob
	strictDecode(t, jobFile, &soak)
	env := map[string]string{}
	for _, e := range soak.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	if v, ok := env["LABEL_FILTER"]; !ok || v != "" {
		t.Errorf("%s: LABEL_FILTER %q (set %v), want it in the env, empty", jobFile, v, ok)
	}
	script := soak.Spec.Template.Spec.Containers[0].Args[0]
	base := map[string]string{"JOB_COMPLETION_INDEX": "0", "SHARDS": "2", "JOB_NAME": "faultwin-soak-x7k2p"}
	for _, c := range []struct{ passes, filter, want, not string }{
		{"20", "", "soak -n 20 --shard 1/2 --results", "--label-filter"},
		{"1", "W3 && timed", "soak -n 1 --shard 1/2 --label-filter W3 && timed --results", ""},
	} {
		e := map[string]string{"PASSES": c.passes, "LABEL_FILTER": c.filter}
		for k, v := range base {
			e[k] = v
		}
		got := runScript(t, script, e)
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("soak script with PASSES=%q LABEL_FILTER=%q ran\n%s\nwant %q", c.passes, c.filter, got, c.want)
		}
	}
}

// runScript runs a container's script with a stand-in bin/faultwin that
// prints its arguments, /results moved to a temporary directory (printed
// as RESULTS), and two shard files there for the merge's glob.
func runScript(t *testing.T, script string, env map[string]string) string {
	t.Helper()
	out, err := runScriptErr(t, script, env)
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	return out
}

// runScriptErr is runScript returning the script's error.
func runScriptErr(t *testing.T, script string, env map[string]string) (string, error) {
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
	return strings.ReplaceAll(string(out), results, "RESULTS"), err
}

// The parts of a Job, a pod and a RuntimeClass the manifests use, for a
// strict decoding: a field not named here (a misspelt runtimeClassName, a
// nodeSelector one level off) fails the test instead of being ignored, as
// the API server's strict field validation would refuse it. Fields the
// placement does not depend on are decoded as any.
type (
	kubeMeta struct {
		Name         string            `yaml:"name"`
		GenerateName string            `yaml:"generateName"`
		Labels       map[string]string `yaml:"labels"`
		Annotations  map[string]string `yaml:"annotations"`
	}
	kubeJob struct {
		APIVersion string   `yaml:"apiVersion"`
		Kind       string   `yaml:"kind"`
		Metadata   kubeMeta `yaml:"metadata"`
		Spec       struct {
			CompletionMode          string `yaml:"completionMode"`
			Completions             *int   `yaml:"completions"`
			Parallelism             *int   `yaml:"parallelism"`
			BackoffLimit            *int   `yaml:"backoffLimit"`
			BackoffLimitPerIndex    *int   `yaml:"backoffLimitPerIndex"`
			MaxFailedIndexes        *int   `yaml:"maxFailedIndexes"`
			ActiveDeadlineSeconds   *int   `yaml:"activeDeadlineSeconds"`
			TTLSecondsAfterFinished *int   `yaml:"ttlSecondsAfterFinished"`
			Template                struct {
				Metadata kubeMeta `yaml:"metadata"`
				Spec     kubePod  `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	kubePod struct {
		RestartPolicy             string            `yaml:"restartPolicy"`
		RuntimeClassName          string            `yaml:"runtimeClassName"`
		HostPID                   bool              `yaml:"hostPID"`
		NodeSelector              map[string]string `yaml:"nodeSelector"`
		Tolerations               []kubeToleration  `yaml:"tolerations"`
		Affinity                  any               `yaml:"affinity"`
		TopologySpreadConstraints any               `yaml:"topologySpreadConstraints"`
		Containers                []kubeContainer   `yaml:"containers"`
		Volumes                   []map[string]any  `yaml:"volumes"`
	}
	kubeToleration struct {
		Key      string `yaml:"key"`
		Operator string `yaml:"operator"`
		Value    string `yaml:"value"`
		Effect   string `yaml:"effect"`
	}
	kubeContainer struct {
		Name            string `yaml:"name"`
		Image           string `yaml:"image"`
		ImagePullPolicy string `yaml:"imagePullPolicy"`
		WorkingDir      string `yaml:"workingDir"`
		SecurityContext *struct {
			Privileged bool `yaml:"privileged"`
			RunAsUser  *int `yaml:"runAsUser"`
		} `yaml:"securityContext"`
		Env []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom *struct {
				FieldRef struct {
					FieldPath string `yaml:"fieldPath"`
				} `yaml:"fieldRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		Command      []string         `yaml:"command"`
		Args         []string         `yaml:"args"`
		Resources    any              `yaml:"resources"`
		VolumeMounts []map[string]any `yaml:"volumeMounts"`
	}
	kubeRuntimeClass struct {
		APIVersion string   `yaml:"apiVersion"`
		Kind       string   `yaml:"kind"`
		Metadata   kubeMeta `yaml:"metadata"`
		Handler    string   `yaml:"handler"`
		Scheduling struct {
			NodeSelector map[string]string `yaml:"nodeSelector"`
			Tolerations  []kubeToleration  `yaml:"tolerations"`
		} `yaml:"scheduling"`
	}
)

// strictDecode decodes the one document of path into v, refusing a field v
// does not have.
func strictDecode(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: more than one document (%v)", path, err)
	}
}

// soakNodeLabel is the label of the nodes that hold the image and the
// runtime handler (docs/soak.md, "Sharded soaks").
const soakNodeLabel = "faultwin/soak-node"

// TestSoakJobPlacement: the soak and merge Jobs would run as written. Both
// run on the soak nodes, where the image was loaded (imagePullPolicy
// Never finds it nowhere else), with the runtime class whose snapshotter
// is not overlayfs; the soak's shard count is its completions; a pod whose
// index is past it refuses to start.
func TestSoakJobPlacement(t *testing.T) {
	var soak, merge kubeJob
	var class kubeRuntimeClass
	strictDecode(t, jobFile, &soak)
	strictDecode(t, mergeJobFile, &merge)
	strictDecode(t, classFile, &class)

	want := map[string]string{soakNodeLabel: "true"}
	toleration := kubeToleration{Key: soakNodeLabel, Operator: "Equal", Value: "true", Effect: "NoSchedule"}
	sp, mp := soak.Spec.Template.Spec, merge.Spec.Template.Spec
	for _, j := range []struct {
		file string
		pod  kubePod
	}{{jobFile, sp}, {mergeJobFile, mp}} {
		if !maps.Equal(j.pod.NodeSelector, want) {
			t.Errorf("%s: nodeSelector %v, want %v (the nodes that hold the image)", j.file, j.pod.NodeSelector, want)
		}
		if len(j.pod.Tolerations) != 1 || j.pod.Tolerations[0] != toleration {
			t.Errorf("%s: tolerations %+v, want only %+v (the soak nodes' optional taint)", j.file, j.pod.Tolerations, toleration)
		}
		if j.pod.RuntimeClassName != class.Metadata.Name || class.Metadata.Name == "" {
			t.Errorf("%s: runtimeClassName %q, want %q (%s)", j.file, j.pod.RuntimeClassName, class.Metadata.Name, classFile)
		}
		if len(j.pod.Containers) == 0 {
			t.Fatalf("%s: no container", j.file)
		}
		for _, c := range j.pod.Containers {
			// A local image: Never, and only with the soak nodes' selector.
			if c.ImagePullPolicy != "Never" || !strings.HasPrefix(c.Image, "localhost/") {
				t.Errorf("%s: container %s: image %s, pull policy %q: want the loaded localhost/ image, Never", j.file, c.Name, c.Image, c.ImagePullPolicy)
			}
			if c.ImagePullPolicy == "Never" && j.pod.NodeSelector[soakNodeLabel] != "true" {
				t.Errorf("%s: container %s pulls Never without the %s selector: it would land on a node without the image", j.file, c.Name, soakNodeLabel)
			}
		}
	}
	if sp.Containers[0].Image != mp.Containers[0].Image {
		t.Errorf("merge image %s, soak image %s: want the same", mp.Containers[0].Image, sp.Containers[0].Image)
	}
	if class.APIVersion != "node.k8s.io/v1" || class.Kind != "RuntimeClass" || class.Handler == "" {
		t.Errorf("%s: %s %s handler %q: want a node.k8s.io/v1 RuntimeClass with a handler", classFile, class.APIVersion, class.Kind, class.Handler)
	}
	if !maps.Equal(class.Scheduling.NodeSelector, want) || len(class.Scheduling.Tolerations) != 1 || class.Scheduling.Tolerations[0] != toleration {
		t.Errorf("%s: scheduling %+v, want the Jobs' nodeSelector and toleration", classFile, class.Scheduling)
	}

	// n: completions, parallelism and the annotation the pods read.
	if soak.Spec.Completions == nil || soak.Spec.Parallelism == nil {
		t.Fatalf("%s: no completions or parallelism", jobFile)
	}
	n := *soak.Spec.Completions
	ann := soak.Spec.Template.Metadata.Annotations["faultwin/shards"]
	if ann != strconv.Itoa(n) || *soak.Spec.Parallelism != n || soak.Spec.MaxFailedIndexes == nil || *soak.Spec.MaxFailedIndexes != n {
		t.Errorf("%s: completions %d, parallelism %d, maxFailedIndexes %v, annotation faultwin/shards %q: want all equal",
			jobFile, n, *soak.Spec.Parallelism, soak.Spec.MaxFailedIndexes, ann)
	}
	from := ""
	for _, e := range sp.Containers[0].Env {
		if e.Name == "SHARDS" {
			if e.Value != "" || e.ValueFrom == nil {
				t.Errorf("%s: SHARDS is written (%q), want it read from the annotation", jobFile, e.Value)
			} else {
				from = e.ValueFrom.FieldRef.FieldPath
			}
		}
	}
	if from != "metadata.annotations['faultwin/shards']" {
		t.Errorf("%s: SHARDS from %q, want the downward API's metadata.annotations['faultwin/shards']", jobFile, from)
	}
	script := sp.Containers[0].Args[0]
	for _, bad := range []map[string]string{
		{"JOB_COMPLETION_INDEX": strconv.Itoa(n), "SHARDS": ann}, // completions raised, the annotation not
		{"JOB_COMPLETION_INDEX": "0", "SHARDS": ""},
	} {
		bad["PASSES"], bad["JOB_NAME"] = "20", "faultwin-soak-x7k2p"
		out, err := runScriptErr(t, script, bad)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 64 || !strings.Contains(out, "faultwin/shards") || strings.Contains(out, "soak -n") {
			t.Errorf("soak script with %v: %v\n%s\nwant exit 64 naming faultwin/shards before any soak", bad, err, out)
		}
	}
}

// workflowsDir holds the GitHub Actions workflows actionlint checks.
const workflowsDir = "../../.github/workflows"

// TestWorkflowPinned: every action the workflows use is pinned to a
// commit (a tag can be moved), with its tag in a comment beside it.
func TestWorkflowPinned(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(workflowsDir, "*.y*ml"))
	if len(files) == 0 {
		t.Fatalf("no workflow in %s", workflowsDir)
	}
	pinned := regexp.MustCompile(`^[a-z0-9-]+/[a-z0-9._-]+(/[^@\s]+)?@[0-9a-f]{40} # v\d+\.\d+\.\d+$`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			_, u, ok := strings.Cut(line, "uses:")
			if !ok || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			n++
			if u = strings.TrimSpace(u); !pinned.MatchString(u) {
				t.Errorf("%s:%d: uses %q: want OWNER/REPO@<40-hex commit> # vX.Y.Z", f, i+1, u)
			}
		}
	}
	if n == 0 {
		t.Error("no uses: line found")
	}
}

// TestActionlint runs actionlint on the workflows, with the runner labels
// of .github/actionlint.yaml, at the version `make deps` installs (the
// Makefile's ACTIONLINT_VERSION): a missing or other actionlint fails.
// shellcheck and pyflakes, which actionlint runs on `run:` scripts when it
// finds them on PATH, are left out so every machine lints alike.
func TestActionlint(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ACTIONLINT_VERSION\s*=\s*(v\S+)\s*$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no ACTIONLINT_VERSION")
	}
	version := string(m[1])
	bin := actionlintBinary(t, version)
	got, err := exec.Command(bin, "-version").Output()
	if first, _, _ := strings.Cut(string(got), "\n"); err != nil || first != version {
		t.Fatalf("%s -version: %q (%v), want %s: run `make deps`, which installs actionlint %s into bin/", bin, first, err, version, version)
	}
	files, _ := filepath.Glob(filepath.Join(workflowsDir, "*.y*ml"))
	if len(files) == 0 {
		t.Fatalf("no workflow in %s", workflowsDir)
	}
	args := []string{"-no-color", "-shellcheck=", "-pyflakes=", "-config-file", "../../.github/actionlint.yaml"}
	out, err := exec.Command(bin, append(args, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("actionlint %s: %v\n%s", strings.Join(files, " "), err, out)
	}
}

// actionlintBinary finds actionlint: in bin/, where `make deps` installs
// it, else on PATH, else in $(go env GOPATH)/bin. None is a failure, never
// a skip: the workflows would go unchecked.
func actionlintBinary(t *testing.T, version string) string {
	t.Helper()
	if p, err := filepath.Abs("../../bin/actionlint"); err == nil {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("actionlint"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			if p := filepath.Join(dir, "bin", "actionlint"); dir != "" {
				if _, err := os.Stat(p); err == nil {
					return p
				}
			}
		}
	}
	t.Fatalf("no actionlint in bin/, on PATH or in $(go env GOPATH)/bin: run `make deps`, which installs actionlint %s into bin/", version)
	return ""
}
