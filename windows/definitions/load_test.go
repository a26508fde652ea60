package definitions

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"faultwin/internal/model"
)

// valid is a well-formed definition; cases below break it one way at a time.
const valid = `id: W3
operation: restore
point: restore.during_criu
delays_ms: [30, 80]
precondition: {cold: 1, checkpoint: true}
criteria: [F1, P1]
description: a timed restore window
`

func loadOne(t *testing.T, text string) ([]model.Window, error) {
	t.Helper()
	return LoadFS(fstest.MapFS{"windows/a.yaml": {Data: []byte(text)}}, "windows", testSpecs)
}

// errorLines splits a joined error into its lines, one per problem.
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"unknown field", valid + "colour: red\n", []string{
			"windows/a.yaml:8: colour: unknown field (known fields here: id, driver, operation, point, delays_ms, kill, lands_in, second_death, precondition, criteria, labels, description)"}},
		{"repeated field", valid + "kill: supervisor\nkill: criu_first\n", []string{
			"windows/a.yaml:9: kill: field repeated (first at line 8) (keep one of the two)"}},
		{"unknown precondition field", strings.Replace(valid, "{cold: 1, checkpoint: true}", "{cold: 1, checkpoint: true, warm: 2}", 1), []string{
			"windows/a.yaml:5: precondition.warm: unknown field (known fields here: cold, restored, checkpoint, display, fail_restore, network_lock)"}},
		{"unknown operation", strings.Replace(valid, "operation: restore", "operation: migrate", 1), []string{
			`windows/a.yaml:2: operation: refsup has no operation "migrate" (use one of restore, checkpoint, destroy, sweep, idle, hibernate, save)`}},
		{"unknown driver", "driver: podmn\n" + valid, []string{
			`windows/a.yaml:1: driver: unknown driver "podmn" (use one of refsup, or give the supervisor's description beside the windows (faultwin lint mysup.yaml windows/mysup/) or with --supervisor mysup.yaml)`}},
		{"unknown point", strings.Replace(valid, "restore.during_criu", "restore.during_crui", 1), []string{
			`windows/a.yaml:3: point: refsup has no fault point "restore.during_crui" (use one of ` + strings.Join(windowPoints(testSpecs[0]), ", ") + `, or add the point to the supervisor and publish it in its driver's spec)`}},
		{"point of another operation", strings.Replace(valid, "restore.during_criu", "checkpoint.after_dump", 1), []string{
			"windows/a.yaml:3: point: checkpoint.after_dump is passed by operation checkpoint, not restore (use a restore.* point or operation: checkpoint)",
			"windows/a.yaml:4: delays_ms: checkpoint.after_dump is not a timed point (remove delays_ms or use a timed point (checkpoint.during_criu, hibernate.during_criu, restore.during_criu, restore.ext_criu, restore.ext_criu_first, restore.ext_criu_only, restore.ext_start, save.during_criu))"}},
		{"unknown criterion", strings.Replace(valid, "[F1, P1]", "[F1, P9]", 1), []string{
			`windows/a.yaml:6: criteria[1]: unknown criterion "P9" (use F1, O1, P1, P2, P3, P4, P5, P6, P7, H1, R1, R2, R3, R4, U1, U2, U3)`}},
		{"repeated criterion", strings.Replace(valid, "[F1, P1]", "[F1, P1, F1]", 1), []string{
			"windows/a.yaml:6: criteria[2]: criterion F1 repeated (first at line 6) (remove the repeat)"}},
		{"F1 missing", strings.Replace(valid, "[F1, P1]", "[P1]", 1), []string{
			"windows/a.yaml:6: criteria: F1 is missing: without it a window whose fault never fired could pass (add F1)"}},
		{"zero delay", strings.Replace(valid, "[30, 80]", "[0, 80]", 1), []string{
			"windows/a.yaml:4: delays_ms[0]: delay 0 ms is out of range (use 1..10000 ms after CRIU starts)"}},
		{"negative delay", strings.Replace(valid, "[30, 80]", "[30, -5]", 1), []string{
			"windows/a.yaml:4: delays_ms[1]: delay -5 ms is out of range (use 1..10000 ms after CRIU starts)"}},
		{"huge delay", strings.Replace(valid, "[30, 80]", "[30, 10001]", 1), []string{
			"windows/a.yaml:4: delays_ms[1]: delay 10001 ms is out of range (use 1..10000 ms after CRIU starts)"}},
		{"repeated delay", strings.Replace(valid, "[30, 80]", "[30, 80, 30]", 1), []string{
			"windows/a.yaml:4: delays_ms[2]: delay 30 ms repeated (first at line 4) (remove the repeat)"}},
		{"delay not a number", strings.Replace(valid, "[30, 80]", "[30, soon]", 1), []string{
			`windows/a.yaml:4: delays_ms[1]: must be an integer, got str "soon" (write a whole number)`}},
		{"empty delays", strings.Replace(valid, "[30, 80]", "[]", 1), []string{
			"windows/a.yaml:4: delays_ms: must be a non-empty list, got a list (write a non-empty list, like [a, b])"}},
		{"timed point without delays", strings.Replace(valid, "delays_ms: [30, 80]\n", "", 1), []string{
			"windows/a.yaml:3: delays_ms: restore.during_criu is a timed point and needs delays (add delays_ms: [30, 80, ...])"}},
		{"delays on untimed point", strings.Replace(valid, "restore.during_criu", "restore.after_overlay", 1), []string{
			"windows/a.yaml:4: delays_ms: restore.after_overlay is not a timed point (remove delays_ms or use a timed point (checkpoint.during_criu, hibernate.during_criu, restore.during_criu, restore.ext_criu, restore.ext_criu_first, restore.ext_criu_only, restore.ext_start, save.during_criu))"}},
		{"criu_first off CRIU", "id: W2\noperation: restore\npoint: restore.after_overlay\nkill: criu_first\nprecondition: {cold: 1, checkpoint: true}\ncriteria: [F1]\ndescription: x\n", []string{
			"windows/a.yaml:4: kill: CRIU is not running at restore.after_overlay, so it cannot be killed first or held (use kill: supervisor, or a point where CRIU runs (checkpoint.criu_post_dump, checkpoint.criu_pre_dump, checkpoint.criu_started, checkpoint.during_criu, hibernate.criu_started, hibernate.during_criu, restore.criu_post_restore, restore.criu_pre_restore, restore.criu_setup_namespaces, restore.criu_started, restore.during_criu, restore.ext_criu, restore.ext_criu_first, restore.ext_criu_only, save.criu_started, save.during_criu))"}},
		{"unknown kill", valid + "kill: everyone\n", []string{
			`windows/a.yaml:8: kill: unknown kill "everyone" (use supervisor or criu_first or criu_held)`}},
		{"missing fields", "id: W3\n", []string{
			"windows/a.yaml:1: operation: missing required field (add `operation: ...` to this definition)",
			"windows/a.yaml:1: point: missing required field (add `point: ...` to this definition)",
			"windows/a.yaml:1: precondition: missing required field (add `precondition: ...` to this definition)",
			"windows/a.yaml:1: description: missing required field (add `description: ...` to this definition)"}},
		{"empty description", strings.Replace(valid, "a timed restore window", `""`, 1), []string{
			`windows/a.yaml:7: description: must be a string, got str "" (write a non-empty text value)`}},
		{"id not a string", strings.Replace(valid, "id: W3", "id: 3", 1), []string{
			`windows/a.yaml:1: id: must be a string, got int "3" (write a non-empty text value)`}},
		{"bad id", strings.Replace(valid, "id: W3", "id: w3_x", 1), []string{
			`windows/a.yaml:1: id: "w3_x" is not a valid family id (use capitals and digits only, like W17 or ORPHAN)`}},
		{"precondition not a mapping", strings.Replace(valid, "{cold: 1, checkpoint: true}", "cold", 1), []string{
			`windows/a.yaml:5: precondition: must be a mapping, got str "cold" (write a mapping like {cold: 1, checkpoint: true})`}},
		{"precondition bad types", strings.Replace(valid, "{cold: 1, checkpoint: true}", "{cold: one, checkpoint: yes}", 1), []string{
			`windows/a.yaml:5: precondition.cold: must be an integer, got str "one" (write a whole number)`,
			`windows/a.yaml:5: precondition.checkpoint: must be a boolean, got str "yes" (write true or false)`}},
		{"precondition out of range", strings.Replace(valid, "{cold: 1, checkpoint: true}", "{cold: 1, restored: -1, checkpoint: true}", 1), []string{
			"windows/a.yaml:5: precondition.restored: -1 sessions is out of range (use 0..16 sessions)"}},
		{"restore without checkpoint", strings.Replace(valid, "{cold: 1, checkpoint: true}", "{cold: 1}", 1), []string{
			"windows/a.yaml:5: precondition: a restore needs a cold session and a checkpoint of it to restore (set cold: 1 and checkpoint: true)"}},
		{"checkpoint without session", "id: W8\noperation: checkpoint\npoint: checkpoint.after_dump\nprecondition: {}\ncriteria: [F1]\ndescription: x\n", []string{
			"windows/a.yaml:4: precondition: a checkpoint needs a cold session to dump (set cold: 1)"}},
		{"destroy without session", "id: W11\noperation: destroy\npoint: destroy.after_kill\nprecondition: {cold: 0}\ncriteria: [F1]\ndescription: x\n", []string{
			"windows/a.yaml:4: precondition: a destroy needs a live session (set cold: 1)"}},
		{"sweep without checkpoint", "id: W14\noperation: sweep\npoint: sweep.after_kill\nprecondition: {cold: 1}\ncriteria: [F1]\ndescription: x\n", []string{
			"windows/a.yaml:4: precondition: a sweep window needs a live cold session and a checkpoint to clean up (set cold: 1 and checkpoint: true)"}},
		{"idle without session", "id: ORPHAN\noperation: idle\npoint: idle.kill\nprecondition: {display: true}\ncriteria: [F1]\ndescription: x\n", []string{
			"windows/a.yaml:4: precondition: an idle kill needs live sessions to orphan (set cold or restored to at least 1)"}},
		{"restored without checkpoint", "id: ORPHAN\noperation: idle\npoint: idle.kill\nprecondition: {cold: 1, restored: 1}\ncriteria: [F1]\ndescription: x\n", []string{
			"windows/a.yaml:4: precondition: restored sessions need a checkpoint to restore from (set checkpoint: true)"}},
		{"fail_restore on ordinary point", strings.Replace(valid, "checkpoint: true}", "checkpoint: true, fail_restore: true}", 1), []string{
			"windows/a.yaml:5: precondition.fail_restore: a restore made to fail never reaches restore.during_criu (remove fail_restore or use point restore.failed_teardown)"}},
		{"failed teardown without fail_restore", "id: W13\noperation: restore\npoint: restore.failed_teardown\nprecondition: {cold: 1, checkpoint: true}\ncriteria: [F1]\ndescription: x\n", []string{
			"windows/a.yaml:4: precondition.fail_restore: restore.failed_teardown is reached only by a restore made to fail (set fail_restore: true)"}},
		{"bad label", valid + "labels: [Timed, ok, ok]\n", []string{
			`windows/a.yaml:8: labels[0]: label "Timed" is not valid (use lower-case letters, digits, '.', '_' and '-')`,
			`windows/a.yaml:8: labels[2]: label "ok" repeated (first at line 8) (remove the repeat)`}},
		{"alias", "base: &b 1\n", []string{
			"windows/a.yaml:1: base: unknown field (known fields here: id, driver, operation, point, delays_ms, kill, lands_in, second_death, precondition, criteria, labels, description)",
			"windows/a.yaml:1: id: missing required field (add `id: ...` to this definition)",
			"windows/a.yaml:1: operation: missing required field (add `operation: ...` to this definition)",
			"windows/a.yaml:1: point: missing required field (add `point: ...` to this definition)",
			"windows/a.yaml:1: precondition: missing required field (add `precondition: ...` to this definition)",
			"windows/a.yaml:1: description: missing required field (add `description: ...` to this definition)"}},
		{"document not a mapping", "- id: W1\n", []string{
			"windows/a.yaml:1: document: a window definition must be a mapping (write `id: W1`, `operation: ...` and the other fields as keys)"}},
		{"syntax error", "id: W3\n  operation: [restore\n", []string{
			"windows/a.yaml:2: document: mapping values are not allowed in this context (fix the YAML syntax)"}},
		{"stream ends in a value", "id: W3\n\"\n", []string{
			"windows/a.yaml:2: document: found unexpected end of stream (fix the YAML syntax)"}},
		{"empty file", "# nothing here\n", []string{
			"windows/a.yaml:1: document: no window definition in this file (add one or remove the file)"}},
		{"duplicate family", valid + "---\n" + valid, []string{
			"windows/a.yaml:9: id: family W3 is already defined at windows/a.yaml:1 (give this family a new id)"}},
		{"long id", strings.Replace(valid, "id: W3", "id: W"+strings.Repeat("1", 32), 1), []string{
			"windows/a.yaml:1: id: 33 characters, at most 32 (shorten it, like W17 or ORPHAN)"}},
		{"long description", strings.Replace(valid, "a timed restore window", strings.Repeat("x", 4097), 1), []string{
			"windows/a.yaml:7: description: 4097 bytes after folding whitespace, at most 4096 (say what the window tests in a paragraph; put longer notes in a YAML comment)"}},
		{"long description in bytes, not characters", strings.Replace(valid, "a timed restore window", strings.Repeat("é", 2049), 1), []string{
			"windows/a.yaml:7: description: 4098 bytes after folding whitespace, at most 4096 (say what the window tests in a paragraph; put longer notes in a YAML comment)"}},
		{"10 MB description", strings.Replace(valid, "a timed restore window", strings.Repeat("word ", 2<<20), 1), []string{
			"windows/a.yaml:1: document: 10485908 bytes, at most 1048576 (a definition file holds window definitions only: remove what is not one, or split the definitions over several files)"}},
		{"too many labels", valid + "labels: [" + strings.Join(manyLabels(17), ", ") + "]\n", []string{
			"windows/a.yaml:8: labels: 17 labels, at most 16 (keep the labels a filter selects on)"}},
		{"long label", valid + "labels: [ok, " + strings.Repeat("l", 41) + "]\n", []string{
			"windows/a.yaml:8: labels[1]: label of 41 characters, at most 40 (shorten it)"}},
		{"file too big", valid + "# " + strings.Repeat("x", 1<<20) + "\n", []string{
			"windows/a.yaml:1: document: 1048749 bytes, at most 1048576 (a definition file holds window definitions only: remove what is not one, or split the definitions over several files)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadOne(t, c.text)
			got := errorLines(err)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("errors:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func manyLabels(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("l%d", i))
	}
	return out
}

// TestLoadSizeLimits: values at the limits load; the description is
// measured after folding; a file over the limit is refused unparsed.
func TestLoadSizeLimits(t *testing.T) {
	atLimit := strings.Replace(valid, "id: W3", "id: W"+strings.Repeat("1", 31), 1)
	atLimit = strings.Replace(atLimit, "a timed restore window", strings.Repeat("x", 4000)+" \n  "+strings.Repeat("\t", 5000)+strings.Repeat("y", 95), 1)
	atLimit += "labels: [" + strings.Join(manyLabels(15), ", ") + ", " + strings.Repeat("l", 40) + "]\n"
	ws, err := loadOne(t, atLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws[0].Family) != MaxIDChars || len(ws[0].Description) != MaxDescriptionBytes || len(ws[0].Labels) != MaxLabels {
		t.Errorf("id %d chars, description %d bytes, %d labels", len(ws[0].Family), len(ws[0].Description), len(ws[0].Labels))
	}

	// Refused before parsing: broken YAML past the limit gives one error.
	huge := []byte("id: [\n" + strings.Repeat("#", MaxFileBytes))
	want := fmt.Sprintf("windows/a.yaml:1: document: %d bytes, at most %d (", len(huge), MaxFileBytes)
	if _, err := loadOne(t, string(huge)); err == nil || len(errorLines(err)) != 1 || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("LoadFS: got %v, want %q", err, want)
	}
	if _, err := ParseFile("windows/a.yaml", huge, testSpecs); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ParseFile: got %v, want %q", err, want)
	}
	if _, err := loadOne(t, valid+"# "+strings.Repeat("x", MaxFileBytes-len(valid)-3)+"\n"); err != nil {
		t.Errorf("a file of exactly %d bytes: %v", MaxFileBytes, err)
	}
}

func TestLoadAliasRejected(t *testing.T) {
	text := strings.Replace(valid, "description: a timed restore window", "description: &d a window", 1) +
		"---\n" + strings.Replace(strings.Replace(valid, "id: W3", "id: W4", 1), "description: a timed restore window", "description: *d", 1)
	_, err := loadOne(t, text)
	want := "windows/a.yaml:15: description: YAML aliases are not allowed in window definitions (write the value out)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestLoadCollectsAcrossFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"windows/a.yaml":   {Data: []byte(valid)},
		"windows/b.yaml":   {Data: []byte("# again\n" + valid)},
		"windows/c.yml":    {Data: []byte(valid)},
		"windows/notes.md": {Data: []byte("ignored")},
		"windows/d.yaml":   {Data: []byte(strings.Replace(valid, "id: W3", "id: W9\nsize: 1", 1))},
	}
	_, err := LoadFS(fsys, "windows", testSpecs)
	want := []string{
		"windows/c.yml:1: document: definition files must end in .yaml (rename it to c.yaml)",
		"windows/d.yaml:2: size: unknown field (known fields here: id, driver, operation, point, delays_ms, kill, lands_in, second_death, precondition, criteria, labels, description)",
		"windows/b.yaml:2: id: family W3 is already defined at windows/a.yaml:1 (give this family a new id)",
	}
	if got := errorLines(err); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("errors:\n got %q\nwant %q", got, want)
	}
}

func TestLoadEmptyDir(t *testing.T) {
	_, err := LoadFS(fstest.MapFS{"windows/x.txt": {}}, "windows", testSpecs)
	if err == nil || !strings.Contains(err.Error(), "no *.yaml file with a definition in windows") {
		t.Fatalf("got %v", err)
	}
	if _, err := LoadFS(fstest.MapFS{}, "nowhere", testSpecs); err == nil {
		t.Fatal("a missing directory loaded")
	}
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := loadOne(t, strings.Replace(valid, "operation: restore", "operation: migrate", 1))
	var e *Error
	if !errorsAs(err, &e) || e.File != "windows/a.yaml" || e.Line != 2 || e.Field != "operation" {
		t.Fatalf("got %#v from %v", e, err)
	}
}
