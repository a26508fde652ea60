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
