package definitions

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
)

// canonical renders f as YAML with a fixed key order and every default
// written out. It is written by hand rather than by a YAML encoder so the
// hash of a definition cannot change with an encoder upgrade; the result is
// itself a valid definition that loads back to the same family.
func (f family) canonical() string {
	var b strings.Builder
	line := func(k, v string) { b.WriteString(k + ": " + v + "\n") }
	line("id", f.ID)
	// The default driver is left out, so definitions registered before a
	// window could name its driver keep their hash.
	if f.Driver != model.DefaultDriver {
		line("driver", f.Driver)
	}
	line("operation", f.Operation)
	line("point", f.Point)
	if len(f.Delays) > 0 {
		ds := make([]string, len(f.Delays))
		for i, d := range f.Delays {
			ds[i] = strconv.Itoa(d)
		}
		line("delays_ms", flow(ds))
	}
	line("kill", f.Kill)
	// Only windows that name their landing phase have one, so older
	// definitions keep their hash.
	if f.LandsIn != "" {
		line("lands_in", f.LandsIn)
	}
	if len(f.LandsAt) > 0 {
		var ps []string
		for _, d := range slices.Sorted(maps.Keys(f.LandsAt)) {
			ps = append(ps, strconv.Itoa(d)+": "+f.LandsAt[d])
		}
		line("lands_in", "{"+strings.Join(ps, ", ")+"}")
	}
	// Only recovery windows have one, so older definitions keep their hash.
	if f.SecondDeath != "" {
		line("second_death", f.SecondDeath)
	}
	p := f.Pre
	line("precondition", "{cold: "+strconv.Itoa(p.Cold)+", restored: "+strconv.Itoa(p.Restored)+
		", checkpoint: "+strconv.FormatBool(p.Checkpoint)+", display: "+strconv.FormatBool(p.Display)+
		", fail_restore: "+strconv.FormatBool(p.FailRestore)+networkLock(p)+"}")
	line("criteria", flow(f.Criteria))
	if len(f.Labels) > 0 {
		line("labels", flow(f.Labels))
	}
	// A JSON string is a valid YAML double-quoted scalar.
	d, _ := json.Marshal(f.Description)
	line("description", string(d))
	return b.String()
}

func flow(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

// networkLock renders the network lock only when one is asked for, so the
// definitions registered before it existed keep their hash.
func networkLock(p model.Precondition) string {
	if p.NetworkLock == "" {
		return ""
	}
	return ", network_lock: " + p.NetworkLock
}
