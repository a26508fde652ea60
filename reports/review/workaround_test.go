package review

import (
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
)

// A recorded workaround is compared like the rest of a result: a row whose
// workaround was edited does not re-judge as recorded.
func TestReplayComparesTheWorkaround(t *testing.T) {
	rec := criteria.Result{ID: model.U1, Judged: true, Summary: "stuck: x; only the expert step a brought it back", Workaround: "b"}
	now := rec
	now.Workaround = "a"
	ds := compareResult(rec, now)
	if len(ds) != 1 || !strings.Contains(ds[0].detail, `workaround recorded "b", recomputed "a"`) {
		t.Errorf("an edited workaround: %+v", ds)
	}
	if ds := compareResult(now, now); len(ds) != 0 {
		t.Errorf("the same result: %+v", ds)
	}
}
