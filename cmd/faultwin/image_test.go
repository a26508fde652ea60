package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The image the nightly's pods run (deploy/image), and what builds it.
const (
	imageBuild      = "../../deploy/image/build.sh"
	imageRecipe     = "../../deploy/image/Containerfile"
	depsScript      = "../../scripts/deps.sh"
	makefile        = "../../Makefile"
	nightlyImageRef = "localhost/faultwin:nightly"
)

// notAtRunTime are the packages of scripts/deps.sh the image leaves out on
// purpose, each with why. Any other package deps.sh installs must be in the
// Containerfile's list: a package added for the windows would otherwise be
// missing only in the pods, found by a nightly that fails.
var notAtRunTime = map[string]string{
	"build-essential": "CRIU build", "pkgconf": "CRIU build", "libbsd-dev": "CRIU build",
	"libcap-dev": "CRIU build", "libgnutls28-dev": "CRIU build", "libnet1-dev": "CRIU build",
	"libnftables-dev": "CRIU build", "libnl-3-dev": "CRIU build", "libprotobuf-c-dev": "CRIU build",
	"libprotobuf-dev": "CRIU build", "protobuf-c-compiler": "CRIU build", "protobuf-compiler": "CRIU build",
	"uuid-dev": "CRIU build", "python3-protobuf": "CRIU build", "xz-utils": "CRIU source unpacking",
	"ca-certificates": "CRIU source download",
	"chromium":        "headless report checks, not window runs",
	"debootstrap":     "builds the image's base",
}

// words returns the package names of a list in shell syntax: comments,
// line continuations and blank lines dropped.
func words(list string) []string {
	var out []string
	for _, line := range strings.Split(list, "\n") {
		line, _, _ = strings.Cut(line, "#")
		out = append(out, strings.Fields(strings.ReplaceAll(line, `\`, " "))...)
	}
	return out
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImagePackagesCoverDeps(t *testing.T) {
	m := regexp.MustCompile(`(?s)\npackages=\((.*?)\n\)`).FindStringSubmatch(readText(t, depsScript))
	if m == nil {
		t.Fatalf("%s: no packages=( ... ) list", depsScript)
	}
	deps := words(m[1])
	p := regexp.MustCompile(`(?s)\nARG PACKAGES="([^"]*)"`).FindStringSubmatch(readText(t, imageRecipe))
	if p == nil {
		t.Fatalf("%s: no ARG PACKAGES=\"...\"", imageRecipe)
	}
	image := words(p[1])
	if len(deps) < 10 || len(image) < 10 {
		t.Fatalf("parsed %d packages from deps.sh and %d from the Containerfile: the lists moved?", len(deps), len(image))
	}
	for _, d := range deps {
		_, out := notAtRunTime[d]
		in := slices.Contains(image, d)
		switch {
		case !in && !out:
			t.Errorf("scripts/deps.sh installs %s, the image (%s ARG PACKAGES) does not: add it there, or to notAtRunTime here with why", d, imageRecipe)
		case in && out:
			t.Errorf("%s is in the image and in notAtRunTime (%s)", d, notAtRunTime[d])
		}
	}
	for d := range notAtRunTime {
		if !slices.Contains(deps, d) {
			t.Errorf("notAtRunTime names %s, which scripts/deps.sh no longer installs", d)
		}
	}
}

// TestImageNamesAgree: make image builds the name the Kubernetes Jobs run
// and the nightly workflow saves, and the Jobs never try to pull it (there
// is no registry: the image is loaded into each node's runtime).
func TestImageNamesAgree(t *testing.T) {
	if m := regexp.MustCompile(`IMAGE=\$\{IMAGE:-([^}]*)\}`).FindStringSubmatch(readText(t, imageBuild)); m == nil || m[1] != nightlyImageRef {
		t.Errorf("%s builds %v, want %s", imageBuild, m, nightlyImageRef)
	}
	if !regexp.MustCompile(`(?m)^image:\n\tdeploy/image/build\.sh$`).MatchString(readText(t, makefile)) {
		t.Errorf("Makefile: no `image:` target running deploy/image/build.sh")
	}
	for _, f := range []string{jobFile, mergeJobFile} {
		for _, d := range yamlDocs(t, f) {
			c := dig(t, d, "spec", "template", "spec", "containers", 0)
			if img := dig(t, c, "image"); img != nightlyImageRef {
				t.Errorf("%s: image %v, want %s (what make image builds)", f, img, nightlyImageRef)
			}
			if pp := dig(t, c, "imagePullPolicy"); pp != "Never" {
				t.Errorf("%s: imagePullPolicy %v, want Never: no registry holds the image", f, pp)
			}
		}
	}
	wf := readText(t, workflowFile)
	job := dig(t, yamlDocs(t, workflowFile)[0], "jobs", "image")
	var runs []string
	for _, st := range dig(t, job, "steps").([]any) {
		if r, ok := st.(map[string]any)["run"].(string); ok {
			runs = append(runs, r)
		}
	}
	all := strings.Join(runs, "\n")
	if !strings.Contains(all, "sudo make image") || !strings.Contains(all, "podman save") || !strings.Contains(all, nightlyImageRef) {
		t.Errorf("workflow image job: want `sudo make image` and `podman save %s`, got:\n%s", nightlyImageRef, all)
	}
	if n := strings.Count(wf, "faultwin:nightly"); n != strings.Count(wf, nightlyImageRef) {
		t.Errorf("workflow names faultwin:nightly without localhost/ (%d of %d): a runtime would look for it in a registry", n-strings.Count(wf, nightlyImageRef), n)
	}
}

// TestImageJobMatchesTest: the soak pod gets what TestImageRuns gives its
// container and needed (image_run_test.go says why each): the image's
// working directory, privilege, the node's pid namespace, its cgroup tree,
// and a state root outside the image's root.
func TestImageJobMatchesTest(t *testing.T) {
	pod := dig(t, yamlDocs(t, jobFile)[0], "spec", "template", "spec")
	c := dig(t, pod, "containers", 0)
	if dig(t, c, "workingDir") != "/src/faultwin" || dig(t, pod, "hostPID") != true || dig(t, c, "securityContext", "privileged") != true {
		t.Errorf("soak pod: workingDir %v hostPID %v privileged %v, want /src/faultwin (the image's clone), true, true",
			dig(t, c, "workingDir"), dig(t, pod, "hostPID"), dig(t, c, "securityContext", "privileged"))
	}
	volumes := map[string]map[string]any{}
	for _, v := range dig(t, pod, "volumes").([]any) {
		m := v.(map[string]any)
		volumes[m["name"].(string)] = m
	}
	mounts := map[string]map[string]any{}
	for _, m := range dig(t, c, "volumeMounts").([]any) {
		mm := m.(map[string]any)
		mounts[mm["mountPath"].(string)] = volumes[mm["name"].(string)]
	}
	if v := mounts["/sys/fs/cgroup"]; v == nil || fmt.Sprint(dig(t, v, "hostPath", "path")) != "/sys/fs/cgroup" {
		t.Errorf("soak pod: /sys/fs/cgroup is %v, want the node's (hostPath /sys/fs/cgroup)", v)
	}
	if v := mounts["/var/lib/faultwin"]; v == nil {
		t.Error("soak pod: no volume at /var/lib/faultwin, the state root's parent")
	}
}
