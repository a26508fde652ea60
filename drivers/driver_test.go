package drivers

import "testing"

// Env is what reaches refsup as FAULTWIN_FAULT_AT; a wrong spelling would arm
// a different fault, or none.
func TestFaultEnv(t *testing.T) {
	for _, c := range []struct {
		f    Fault
		want string
	}{
		{Fault{Point: "restore.after_overlay", Kill: "supervisor"}, "restore.after_overlay"},
		{Fault{Point: "restore.during_criu", DelayMS: 80, Kill: "supervisor"}, "restore.during_criu+80"},
		{Fault{Point: "restore.during_criu", DelayMS: 150, Kill: "criu_first"}, "restore.during_criu+150!criu"},
	} {
		if got := c.f.Env(); got != c.want {
			t.Errorf("%+v: Env() = %q, want %q", c.f, got, c.want)
		}
	}
}
