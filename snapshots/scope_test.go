package snapshots

import "testing"

func TestRootsInScope(t *testing.T) {
	r := Roots{StateRoot: "/var/lib/fw", Extra: []string{"/srv/decoy"}, TmpDir: "/tmp"}
	for path, want := range map[string]bool{
		"/var/lib/fw/r1/log":        true,
		"/var/lib/fwx/r1":           false,
		"/srv/decoy":                true,
		"/srv/decoy2":               false,
		"/tmp/.criu.cgyard.1/cpu":   true,
		"/tmp/other":                false,
		"/":                         false,
		"socket:[1234]":             false,
		"/var/lib/fw/r1 (deleted)":  true,
		"/var/lib/fw (deleted)/foo": false,
	} {
		if got := r.InScope(path); got != want {
			t.Errorf("InScope(%q) = %v, want %v", path, got, want)
		}
	}
	if (Roots{}).InScope("/x") {
		t.Error("empty roots must scope nothing")
	}
}

func TestSysctlKeyAndPath(t *testing.T) {
	if got := SysctlKey("net/ipv4/ip_forward"); got != "net.ipv4.ip_forward" {
		t.Errorf("SysctlKey = %q", got)
	}
	if got := SysctlKey("net.ipv4.ip_forward"); got != "net.ipv4.ip_forward" {
		t.Errorf("SysctlKey(dotted) = %q", got)
	}
	if got := SysctlPath("net.ipv4.ip_forward"); got != "net/ipv4/ip_forward" {
		t.Errorf("SysctlPath(dotted) = %q", got)
	}
	if got := SysctlPath("/net/ipv4/conf/eth0.1/forwarding"); got != "net/ipv4/conf/eth0.1/forwarding" {
		t.Errorf("SysctlPath(slash) = %q", got)
	}
}
