// Package promtest checks the Prometheus text faultwin writes, for the
// tests of the packages that write it (render and the CLI).
package promtest

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
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

// Samples parses Prometheus text with the Prometheus text parser and
// returns every sample by "name{label=value,...}" (labels sorted), failing
// t on text the parser refuses, a duplicate series, or a metric that is not
// a faultwin_ gauge with HELP; what names the text in errors.
func Samples(t testing.TB, what string, text []byte) map[string]float64 {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%s: the Prometheus text parser refuses it: %v\n%s", what, err, text)
	}
	out := map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "faultwin_") || f.GetType() != dto.MetricType_GAUGE || f.GetHelp() == "" {
			t.Errorf("%s: %s: type %v, help %q: want a faultwin_ gauge with HELP", what, name, f.GetType(), f.GetHelp())
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			key := name + "{" + strings.Join(ls, ",") + "}"
			if _, dup := out[key]; dup {
				t.Errorf("%s: duplicate series %s", what, key)
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

// Sample fails t unless got holds key with the value want: NaN where want
// is NaN, a number within 1e-9 of want otherwise (never NaN for a number).
func Sample(t testing.TB, got map[string]float64, key string, want float64) {
	t.Helper()
	v, ok := got[key]
	switch {
	case !ok:
		t.Errorf("no sample %s", key)
	case math.IsNaN(want) != math.IsNaN(v), !math.IsNaN(want) && math.Abs(v-want) > 1e-9:
		t.Errorf("%s = %v, want %v", key, v, want)
	}
}
