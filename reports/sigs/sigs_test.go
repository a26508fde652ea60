package sigs

import (
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	h := strings.Repeat("ab", 32)
	es := []Entry{{Seal: h, Signature: armorBegin + "\nAAAA\n" + armorEnd + "\n"}}
	b := Format("x.jsonl", es)
	got, err := Parse(b)
	if err != nil || len(got) != 1 || got[0].Seal != h || got[0].Signature != es[0].Signature || got[0].Line != 2 {
		t.Fatalf("Parse(Format) = %+v, %v\n%s", got, err, b)
	}
	for _, bad := range []string{
		"seal xyz\n",
		"seal " + h + "\n",
		"seal " + h + "\nseal " + h + "\n",
		"garbage\n",
		"seal " + h + "\n" + armorBegin + "\nAAAA\n",
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// FuzzParse: a .sig file is outside input. Parse must not panic, and what
// it accepts formats back to entries it parses the same (seal, signature).
func FuzzParse(f *testing.F) {
	h := strings.Repeat("ab", 32)
	f.Add(Format("x.jsonl", []Entry{{Seal: h, Signature: armorBegin + "\nAAAA\n" + armorEnd + "\n"}}))
	f.Add([]byte("seal " + h + "\n" + armorBegin + "\n"))
	f.Add([]byte("# comment\n\nseal " + strings.Repeat("0", 64) + "\n" + armorBegin + "\n" + armorEnd + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := Parse(b)
		if err != nil {
			return
		}
		again, err := Parse(Format("x.jsonl", es))
		if err != nil || len(again) != len(es) {
			t.Fatalf("Format of what Parse accepted does not parse back: %v (%d of %d)", err, len(again), len(es))
		}
		for i := range es {
			if again[i].Seal != es[i].Seal || again[i].Signature != es[i].Signature {
				t.Errorf("entry %d changed through Format: %+v -> %+v", i, es[i], again[i])
			}
		}
	})
}
