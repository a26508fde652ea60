package model

import "testing"

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a/r1", "/a/r1", true},
		{"/a/r1/x", "/a/r1", true},
		{"/a/r1/x/", "/a/r1/", true},
		{"/a/r10", "/a/r1", false},
		{"/a/r10/x", "/a/r1", false},
		{"/a/r1/../r10", "/a/r1", false},
		{"/a", "/a/r1", false},
		{"/", "/", true},
		{"/anything", "/", true},
		{"/a", "/", true},
		{"", "/", false},
		{"a/r1", "a", false},
		{"/a/r1", "", false},
		{"/a/r1", "a", false},
		{"//a//r1/", "/a", true},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}

func TestBelow(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/s/r1", "/s", true},
		{"/s", "/s", false},
		{"/s/", "/s", false},
		{"/", "/", false},
		{"/x", "/", true},
		{"/s1", "/s", false},
	} {
		if got := Below(c.p, c.dir); got != c.want {
			t.Errorf("Below(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}

func TestInCRIUTmp(t *testing.T) {
	for _, c := range []struct {
		p, tmp string
		want   bool
	}{
		{"/tmp/.criu.mntns.x", "/tmp", true},
		{"/tmp/.criu.mntns.x/sub", "/tmp", true},
		{"/tmp/x/.criu.mntns", "/tmp", false},
		{"/tmp", "/tmp", false},
		{"/tmpx/.criu.a", "/tmp", false},
		{"/.criu.a", "/", true},
	} {
		if got := InCRIUTmp(c.p, c.tmp); got != c.want {
			t.Errorf("InCRIUTmp(%q, %q) = %v, want %v", c.p, c.tmp, got, c.want)
		}
	}
}

func TestFaultString(t *testing.T) {
	for _, c := range []struct {
		f    Fault
		want string
	}{
		{Fault{Point: "restore.after_overlay", Kill: KillSupervisor}, "restore.after_overlay"},
		{Fault{Point: "restore.during_criu", DelayMS: 80, Kill: KillSupervisor}, "restore.during_criu+80"},
		{Fault{Point: "restore.during_criu", DelayMS: 150, Kill: KillCRIUFirst}, "restore.during_criu+150!criu"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%+v: String() = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestRunOfCgroup(t *testing.T) {
	for p, want := range map[string]string{
		"/faultwin/r1/s1":                    "r1",
		"/sys/fs/cgroup/pids/faultwin/r1":    "r1",
		"/process_api/x/faultwin/r10/s2":     "r10",
		"/faultwin":                          "",
		"/faultwin/":                         "",
		"/faultwinx/r1":                      "",
		"/":                                  "",
		"/sys/fs/cgroup/pids/faultwin_r1/s1": "",
		"faultwin/r2":                        "r2",
		"/faultwin//r3":                      "",
		"/faultwin/r1/faultwin/r4/x":         "r4",
		"/faultwin/r1/faultwin":              "r1",
		"/a/faultwin/faultwin":               "faultwin",
		"":                                   "",
	} {
		got, ok := RunOfCgroup(p)
		if got != want || ok != (want != "") {
			t.Errorf("RunOfCgroup(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
}

func TestMadeFrom(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/run/tool/lock/var/lib/fw/r1/c1", "/var/lib/fw/r1", true},
		{"/run/tool/lock/var/lib/fw/r1", "/var/lib/fw/r1", true},
		{"/run/tool/lock/var/lib/fw/r10/c1", "/var/lib/fw/r1", false},
		{"/var/lib/fw/r1/c1", "/var/lib/fw/r1", false}, // within it, not made from it
		{"/run/tool/lock/c1", "/var/lib/fw/r1", false},
		{"/run/x", "", false},
		{"/run/x", "/", false},
	} {
		if got := MadeFrom(c.p, c.dir); got != c.want {
			t.Errorf("MadeFrom(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}
