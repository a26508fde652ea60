package definitions

import (
	"fmt"
	"slices"
	"strconv"

	"faultwin/internal/model"
)

// InstanceID names a timed family's instance at delay ms: "W3_150".
func InstanceID(family string, delayMS int) string { return family + "_" + strconv.Itoa(delayMS) }

// Instance returns family's window at delay ms, for a delay the family
// may not list (explore measures every step of a range): the registered
// instance at that delay when there is one; otherwise the family's first
// instance moved to the delay, which names a phase to land in only when
// every registered instance names the same one (a family-wide lands_in).
// A phase given per delay says nothing about a delay it does not list.
func Instance(ws []model.Window, family string, delayMS int) (model.Window, error) {
	var mine []model.Window
	for _, w := range ws {
		if w.Family == family {
			mine = append(mine, w)
		}
	}
	if len(mine) == 0 {
		return model.Window{}, fmt.Errorf("no registered family %s", family)
	}
	if i := slices.IndexFunc(mine, func(w model.Window) bool { return w.Fault.DelayMS == delayMS }); i >= 0 {
		return mine[i], nil
	}
	w := mine[0]
	if slices.ContainsFunc(mine, func(o model.Window) bool { return o.Fault.LandsIn != w.Fault.LandsIn }) {
		w.Fault.LandsIn = "" // phases given per delay say nothing of this one
	}
	w.ID = InstanceID(family, delayMS)
	w.Fault.DelayMS = delayMS
	w.Criteria = slices.Clone(w.Criteria)
	w.Labels = slices.Clone(w.Labels)
	return w, nil
}
