// Package promtest checks the Prometheus text faultwin writes, for the
// tests of the packages that write it (render and the CLI).
package promtest

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
)

// allowed are the labels each metric family may carry: no file label
// outside the faultwin_file_* series, whose file is a base name, never a
// path (a path changes with each run directory, and each new value starts
// new series).
var allowed = map[string][]string{
	"faultwin_window_": {"window", "arm", "family", "driver", "shard"},
	"faultwin_ab_":     {"window", "criterion", "class", "shard"},
	"faultwin_file_":   {"file", "state"},
	"faultwin_last_":   {"driver", "shard"},
	"faultwin_merge_":  nil,
}

// Labels fails t on a metric it does not know, a label its metric does
// not have, or a file label that is a path; what names the text in errors.
func Labels(t testing.TB, what string, text []byte) {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for name, f := range fams {
		want, known := []string(nil), false
		for prefix, ls := range allowed {
			if strings.HasPrefix(name, prefix) {
				want, known = ls, true
			}
		}
		if !known {
			t.Errorf("%s: %s, a metric this check does not know", what, name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(want, l.GetName()) {
					t.Errorf("%s: %s has label %s=%q, want only %q", what, name, l.GetName(), l.GetValue(), want)
				}
				if l.GetName() == "file" && strings.Contains(l.GetValue(), "/") {
					t.Errorf("%s: %s: file label %q is a path, not a base name", what, name, l.GetValue())
				}
			}
		}
	}
}
