package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The integration tier runs exactly the tests the unit tier skipped in
// its packages: a skipped test, a test one of whose subtests skipped; not
// one that passed or failed, nor another package's.
func TestSkippedTests(t *testing.T) {
	run := strings.Join([]string{
		`{"Action":"skip","Package":"faultwin/a","Test":"TestHost"}`,
		`{"Action":"pass","Package":"faultwin/a","Test":"TestPure"}`,
		`{"Action":"skip","Package":"faultwin/a","Test":"TestMixed/root"}`,
		`{"Action":"pass","Package":"faultwin/a","Test":"TestMixed/plain"}`,
		`{"Action":"pass","Package":"faultwin/a","Test":"TestMixed"}`,
		`{"Action":"fail","Package":"faultwin/a","Test":"TestBroken"}`,
		`{"Action":"skip","Package":"faultwin/b","Test":"TestOther"}`,
		`not json`,
		`{"Action":"skip","Package":"faultwin/a"}`,
	}, "\n")
	got, err := skippedTests(strings.NewReader(run), []string{"faultwin/a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"TestHost", "TestMixed"}; !slices.Equal(got, want) {
		t.Fatalf("skipped %q, want %q", got, want)
	}
	re := regexp.MustCompile(runPattern(got))
	for name, want := range map[string]bool{"TestHost": true, "TestMixed": true, "TestHostile": false, "XTestHost": false, "TestPure": false} {
		if re.MatchString(name) != want {
			t.Errorf("pattern %s matches %s: %v, want %v", re, name, !want, want)
		}
	}
	if _, err := skippedTests(strings.NewReader(run), []string{"faultwin/none"}); err == nil {
		t.Error("a run without the packages' tests: no error (the tier would run nothing)")
	}
}
