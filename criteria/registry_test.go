package criteria_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
)

// Every criterion is registered once with its judge and its legend line,
// every id a window may list is registered and nothing else is, and each
// has its section in docs/criteria.md and a mutant in docs/mutants.md that
// makes it fail (PRE, the preflight's gatekeeper, is failed by any
// leftover: its mutant is every other's next window).
func TestEveryCriterionInOnePlace(t *testing.T) {
	docs := read(t, "../docs/criteria.md")
	mutants := read(t, "../docs/mutants.md")
	var ids []string
	for _, c := range criteria.Registered() {
		ids = append(ids, c.ID)
		if !c.Judges() {
			t.Errorf("%s: registered without a judge", c.ID)
		}
		if strings.TrimSpace(c.Legend) == "" {
			t.Errorf("%s: registered without a legend line", c.ID)
		}
		if !regexp.MustCompile(`(?m)^\| ` + c.ID + ` \|`).MatchString(docs) {
			t.Errorf("%s: docs/criteria.md has no row for it (| %s | holds when | false means |)", c.ID, c.ID)
		}
		if c.ID != model.PRE && !hasMutant(mutants, c.ID) {
			t.Errorf("%s: docs/mutants.md names no mutant that makes it fail: a check that cannot fail", c.ID)
		}
	}
	if want := append([]string{model.PRE}, model.CriterionIDs...); !slices.Equal(ids, want) {
		t.Errorf("registered %v, the ids a window may list (PRE, model.CriterionIDs) are %v", ids, want)
	}
}

// hasMutant reports whether a row of the mutants table names id among the
// criteria its mutant makes fail (its first cell: "P1, P3", "U1 (stuck)").
func hasMutant(table, id string) bool {
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, f := range strings.FieldsFunc(cells[1], func(r rune) bool { return r == ',' || r == ' ' }) {
			if f == id {
				return true
			}
		}
	}
	return false
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
