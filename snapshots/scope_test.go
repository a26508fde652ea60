package snapshots

import "testing"

func TestUnder(t *testing.T) {
	cases := []struct {
		path, root string
		want       bool
	}{
		{"/a/r1/x", "/a/r1", true},
		{"/a/r1", "/a/r1", true},
		{"/a/r1/", "/a/r1", true},
		{"/a/r1", "/a/r1/", true},
		{"/a/r10", "/a/r1", false},
		{"/a/r10/x", "/a/r1", false},
		{"/a/r1/../r10", "/a/r1", false},
		{"/a/r1/./x//y", "/a/r1", true},
		{"/a", "/a/r1", false},
		{"/anything", "/", true},
		{"/", "/", true},
		{"", "/a", false},
		{"/a", "", false},
		{"relative/x", "relative", true},
		{"/relative/x", "relative", false},
	}
	for _, c := range cases {
		if got := Under(c.path, c.root); got != c.want {
			t.Errorf("Under(%q, %q) = %v, want %v", c.path, c.root, got, c.want)
		}
	}
}

func TestUnderCRIUTmp(t *testing.T) {
	cases := []struct {
		path, tmp string
		want      bool
	}{
		{"/tmp/.criu.mntns.abc", "/tmp", true},
		{"/tmp/.criu.mntns.abc/x/y", "/tmp", true},
		{"/tmp/x/.criu.mntns.abc", "/tmp", false},
		{"/tmp/.criux", "/tmp", false},
		{"/tmp", "/tmp", false},
		{"/tmp2/.criu.x", "/tmp", false},
		{"/.criu.x", "/", true},
		{"/tmp/.criu.x", "", false},
	}
	for _, c := range cases {
		if got := UnderCRIUTmp(c.path, c.tmp); got != c.want {
			t.Errorf("UnderCRIUTmp(%q, %q) = %v, want %v", c.path, c.tmp, got, c.want)
		}
	}
}

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
