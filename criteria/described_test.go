package criteria_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	. "faultwin/criteria/matchers"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

// podmanRoots are the declared host-global names of a podman-like
// supervisor: its bridge and veths, named netns, netavark's chains, and what
// it keeps across runs by design.
func podmanRoots(r snapshots.Roots) snapshots.Roots {
	r.Links = []string{"podman0", "veth*"}
	r.Netns = []string{"/run/netns/netns-*"}
	r.Chains = []string{"NETAVARK*"}
	r.Shared = []string{
		"chain ip nat NETAVARK-HOSTPORT-*",
		"chain ip filter NETAVARK_FORWARD",
		"cgroup /faultwin/*/conmon",
		"cgroup /faultwin/*",
	}
	return r
}

// netavark's tables as a capture with Roots.Chains shows them: the shared
// base chains, plus perNet when a network's own chain is left.
func netavark(perNet bool) []snapshots.Table {
	nat := []string{"NETAVARK-HOSTPORT-DNAT", "NETAVARK-HOSTPORT-MASQ", "NETAVARK-HOSTPORT-SETMARK"}
	if perNet {
		nat = append([]string{"NETAVARK-1D8721804F16F"}, nat...)
	}
	return []snapshots.Table{
		{Family: "ip", Name: "filter", Chains: []string{"NETAVARK_FORWARD"}},
		{Family: "ip", Name: "nat", Chains: nat},
	}
}

// Verdicts of the recorded inputs as judged before the described roots
// existed (sha256 of the verdict's JSON): with those roots empty, a row
// recorded then must judge byte for byte the same.
var judgedBefore = map[string]string{
	"preflight_leftover_restorer":  "996cca2674472ff2bbdbf6b30ab90e4f4c82400811f7afb9ffe0384a723c1dd9",
	"r10_decoy_killed":             "3f041aff9b26691dea5af22721cbe6d39d3104ae8be4726360b7f47a0f43d96e",
	"w13_nft_tables_left":          "9e8950adc518b026741475aed22b3c2d381f29b294b5487a7b49b20dc2b94aed",
	"w14_ledger_left":              "05cbfcd543f28a54c634d3c5ab4b9eecf0a73225349e6c4447f604b6bf7dd7e8",
	"w16_second_sweep_not_empty":   "d38152fc862b9aedf530f0b3005631195364e53ede961ce73463c4c253d9e4aa",
	"w2_decoys_not_counted":        "ff697b5651c08b1251629f6aa73e003ab9d93f23a41309df357a14d2d76494fb",
	"w2_unledgered_overlay":        "d7de80b31cc00acb98daf4c6fb4e063ae8c9b82b83601f791cae53458f6c5bf2",
	"w3_250_fault_not_fired":       "3cdc5638edcafa74e94746bd46fd2be8f9c78eda1638eed3506ef243dd214cd6",
	"w4_30_criu_restorer_survived": "65f34a8ded06c9741d6d903f3667febb19777ee6c8577125889432032689c8ab",
	"w4_30_pass":                   "d5f3bfeb25c00f225b3b8a4e71b63fdf28a00005e316f4f8a8e00cced09d3d57",
	"w5_ip_forward_left_on":        "2aa79c32ef6ebbe11c27a72cb4242aae2fc636a8b5759b85cc5c96659856f9b9",
}

func TestDescribedRootsEmptyJudgesAsBefore(t *testing.T) {
	for name, want := range judgedBefore {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(criteria.Evaluate(load(t, name)))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("verdict changed: sha256 %s, want %s\n%s", got, want, b)
			}
		})
	}
}

// Globs that match nothing in a recorded row leave every result as it was:
// only a match changes a judgement.
func TestDescribedRootsMatchingNothingChangeNothing(t *testing.T) {
	for name := range judgedBefore {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			in := load(t, name)
			before, err := json.Marshal(criteria.Evaluate(in))
			g.Expect(err).NotTo(HaveOccurred())
			in.Roots = podmanRoots(in.Roots)
			after, err := json.Marshal(criteria.Evaluate(in))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(after)).To(Equal(string(before)))
		})
	}
}

func TestP2NamedNetns(t *testing.T) {
	netns := snapshots.Mount{ID: 901, Parent: 29, MountPoint: "/run/netns/netns-6a3c0f2e-51b4-9f7e-2d1c-7b3a8e0f4d21", FSType: "nsfs", Source: "nsfs", NS: 4026531841}
	t.Run("left", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Mounts = append(s.Mounts, netns) })
		r := result(t, in, model.P2)
		g.Expect(r).NotTo(Hold())
		g.Expect(r.Evidence).To(Equal([]string{
			"mount /run/netns/netns-6a3c0f2e-51b4-9f7e-2d1c-7b3a8e0f4d21 (nsfs): named netns (in after_sweep, after_sweep2)",
		}))
		g.Expect(r.Summary).To(Equal("1 mount or criu tmp dir left after the sweeps"))
	})
	t.Run("gone", func(t *testing.T) {
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		NewWithT(t).Expect(result(t, in, model.P2)).To(Hold())
	})
	t.Run("other netns names", func(t *testing.T) {
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		other := netns
		other.MountPoint = "/run/netns/cni-1234"
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Mounts = append(s.Mounts, other) })
		NewWithT(t).Expect(result(t, in, model.P2)).To(Hold())
	})
	t.Run("undeclared", func(t *testing.T) {
		in := passing(t)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Mounts = append(s.Mounts, netns) })
		NewWithT(t).Expect(result(t, in, model.P2)).To(Hold())
	})
	t.Run("kept by design", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.Roots.Shared = append(in.Roots.Shared, "mount /run/netns/*")
		in.AfterSweep2.Mounts = append(in.AfterSweep2.Mounts, netns)
		r := result(t, in, model.P2)
		g.Expect(r).To(Hold())
		g.Expect(r).To(HaveEvidence("kept by design: mount /run/netns/netns-6a3c0f2e-51b4-9f7e-2d1c-7b3a8e0f4d21 (in after_sweep2)"))
	})
	t.Run("malformed glob", func(t *testing.T) {
		in := passing(t)
		in.Roots.Netns = []string{"/run/netns/["}
		r := result(t, in, model.P2)
		NewWithT(t).Expect(r.Summary).To(Equal(`not judged: roots: malformed netns glob "/run/netns/["`))
	})
}

func TestP3DescribedLinks(t *testing.T) {
	links := []snapshots.Link{
		{Name: "eth0", Kind: "device", Up: true},
		{Name: "podman0", Kind: "bridge", Up: true},
		{Name: "veth0", Kind: "veth", Up: true},
	}
	t.Run("left", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.AfterSweep2.Links = links
		r := result(t, in, model.P3)
		g.Expect(r).NotTo(Hold())
		g.Expect(r.Evidence).To(Equal([]string{
			"link podman0 (bridge): declared by the driver (in after_sweep2)",
			"link veth0 (veth): declared by the driver (in after_sweep2)",
		}))
		g.Expect(r.Summary).To(Equal("2 links, tables or X11 files left after the sweeps"))
	})
	t.Run("gone", func(t *testing.T) {
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.AfterSweep2.Links = links[:1]
		NewWithT(t).Expect(result(t, in, model.P3)).To(Hold())
	})
	t.Run("undeclared", func(t *testing.T) {
		in := passing(t)
		in.AfterSweep2.Links = links
		NewWithT(t).Expect(result(t, in, model.P3)).To(Hold())
	})
	t.Run("prefix and glob are one finding", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.Roots.Links = append(in.Roots.Links, "dvh*")
		in.AfterSweep2.Links = []snapshots.Link{{Name: "dvh2", Kind: "veth"}}
		g.Expect(result(t, in, model.P3).Evidence).To(Equal([]string{"link dvh2 (veth) (in after_sweep2)"}))
	})
	t.Run("link kept by design", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.Roots.Shared = append(in.Roots.Shared, "link podman0")
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Links = links[:2] })
		r := result(t, in, model.P3)
		g.Expect(r).To(Hold())
		g.Expect(r.Evidence).To(Equal([]string{"kept by design: link podman0 (in after_sweep, after_sweep2)"}))
	})
}

func TestP3Chains(t *testing.T) {
	t.Run("network chain left", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Tables = netavark(true) })
		r := result(t, in, model.P3)
		g.Expect(r).NotTo(Hold())
		g.Expect(r.Evidence).To(Equal([]string{
			"chain ip nat NETAVARK-1D8721804F16F (in after_sweep, after_sweep2)",
			"kept by design: chain ip filter NETAVARK_FORWARD (in after_sweep, after_sweep2)",
			"kept by design: chain ip nat NETAVARK-HOSTPORT-DNAT (in after_sweep, after_sweep2)",
			"kept by design: chain ip nat NETAVARK-HOSTPORT-MASQ (in after_sweep, after_sweep2)",
			"kept by design: chain ip nat NETAVARK-HOSTPORT-SETMARK (in after_sweep, after_sweep2)",
		}))
		g.Expect(r.Summary).To(Equal("1 link, table, chain or X11 file left after the sweeps"))
	})
	t.Run("only the shared base chains", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Tables = netavark(false) })
		r := result(t, in, model.P3)
		g.Expect(r).To(Hold())
		g.Expect(r).To(HaveEvidence("kept by design: chain ip filter NETAVARK_FORWARD"))
		g.Expect(r.Summary).To(Equal("no link, nft table or X11 file of the run after the sweeps"))
	})
	t.Run("undeclared", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Tables = netavark(true) })
		r := result(t, in, model.P3)
		g.Expect(r).To(Hold())
		g.Expect(r.Evidence).To(BeEmpty())
	})
	t.Run("chain of another netns's table", func(t *testing.T) {
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.AfterSweep2.Tables = []snapshots.Table{{Family: "ip", Name: "nat", Netns: "ns 4026532324 via pid 912", Chains: []string{"NETAVARK-1D8721804F16F"}}}
		NewWithT(t).Expect(result(t, in, model.P3)).To(Hold())
	})
	t.Run("appearing between sweeps is a change", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.AfterSweep2.Tables = netavark(true)
		r := result(t, in, model.P6)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("appeared between sweeps: chain ip nat NETAVARK-1D8721804F16F"))
	})
	t.Run("malformed glob", func(t *testing.T) {
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		in.Roots.Chains = []string{"NETAVARK["}
		r := result(t, in, model.P3)
		NewWithT(t).Expect(r).To(BeUnjudged())
		NewWithT(t).Expect(r.Summary).To(Equal(`not judged: roots: malformed chains glob "NETAVARK["`))
	})
}

func TestP3SharedCgroups(t *testing.T) {
	kept := []string{"/sys/fs/cgroup/faultwin/r1", "/sys/fs/cgroup/faultwin/r1/conmon"}
	t.Run("kept by design", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Cgroups = kept })
		r := result(t, in, model.P3)
		g.Expect(r).To(Hold())
		g.Expect(r.Evidence).To(Equal([]string{
			"kept by design: cgroup /sys/fs/cgroup/faultwin/r1 (in after_sweep, after_sweep2)",
			"kept by design: cgroup /sys/fs/cgroup/faultwin/r1/conmon (in after_sweep, after_sweep2)",
		}))
	})
	t.Run("a container's cgroup left", func(t *testing.T) {
		g := NewWithT(t)
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		afterBoth(&in, func(s *snapshots.Snapshot) {
			s.Cgroups = append(append([]string{}, kept...), "/sys/fs/cgroup/faultwin/r1/libpod-9f2c")
		})
		r := result(t, in, model.P3)
		g.Expect(r).NotTo(Hold())
		g.Expect(r).To(HaveEvidence("cgroup /sys/fs/cgroup/faultwin/r1/libpod-9f2c of the run (in after_sweep, after_sweep2)"))
		g.Expect(r.Summary).To(Equal("1 link, table, cgroup or X11 file left after the sweeps"))
	})
	t.Run("not shared without the roots", func(t *testing.T) {
		in := passing(t)
		afterBoth(&in, func(s *snapshots.Snapshot) { s.Cgroups = kept })
		r := result(t, in, model.P3)
		NewWithT(t).Expect(r.Summary).To(Equal("2 links, tables, cgroups or X11 files left after the sweeps"))
	})
	t.Run("chain and cgroup both named", func(t *testing.T) {
		in := passing(t)
		in.Roots = podmanRoots(in.Roots)
		afterBoth(&in, func(s *snapshots.Snapshot) {
			s.Tables = netavark(true)
			s.Cgroups = []string{"/sys/fs/cgroup/faultwin/r1/libpod-9f2c"}
		})
		r := result(t, in, model.P3)
		NewWithT(t).Expect(r.Summary).To(Equal("2 links, tables, chains, cgroups or X11 files left after the sweeps"))
	})
}

func TestLeftoversDescribed(t *testing.T) {
	// Judged by name, as rows recorded before Roots.ByProvenance are
	// (provenance_test.go has the same host judged by claims).
	roots := podmanRoots(snapshots.DefaultRoots("/var/lib/faultwin"))
	roots.ByProvenance = false
	clean := snapshots.Snapshot{
		Label: "preflight", TakenAt: time.Unix(1, 0),
		Links:   []snapshots.Link{{Name: "eth0", Kind: "device"}},
		Mounts:  []snapshots.Mount{{MountPoint: "/run/netns/cni-1", FSType: "nsfs"}},
		Tables:  netavark(false),
		Cgroups: []string{"/sys/fs/cgroup/faultwin", "/sys/fs/cgroup/faultwin/r6", "/sys/fs/cgroup/faultwin/r6/conmon"},
	}
	g := NewWithT(t)
	// A dead run's cgroups are leftovers at the preflight even where the
	// description keeps them by design (P3 excuses them): run r6's parent
	// and conmon cgroups stop the next window.
	g.Expect(criteria.Leftovers(clean, roots)).To(Equal([]string{
		"cgroup /sys/fs/cgroup/faultwin/r6: of run r6",
		"cgroup /sys/fs/cgroup/faultwin/r6/conmon: of run r6",
	}))
	// Rows recorded before that rule judge as they were judged.
	old := roots
	old.RunCgroupsLeft = false
	g.Expect(criteria.Leftovers(clean, old)).To(BeEmpty())
	clean.Cgroups = []string{"/sys/fs/cgroup/faultwin"}
	g.Expect(criteria.Leftovers(clean, roots)).To(BeEmpty())

	dirty := clean
	dirty.Links = append(dirty.Links, snapshots.Link{Name: "podman0", Kind: "bridge"}, snapshots.Link{Name: "veth3", Kind: "veth"})
	dirty.Mounts = append(dirty.Mounts, snapshots.Mount{MountPoint: "/run/netns/netns-77", FSType: "nsfs"})
	dirty.Tables = netavark(true)
	dirty.Cgroups = append(dirty.Cgroups, "/sys/fs/cgroup/faultwin/r6", "/sys/fs/cgroup/faultwin/r6/conmon", "/sys/fs/cgroup/faultwin/r6/libpod-1")
	g.Expect(criteria.Leftovers(dirty, roots)).To(Equal([]string{
		"mount /run/netns/netns-77 (nsfs): named netns",
		"link podman0 (bridge): declared by the driver",
		"link veth3 (veth): declared by the driver",
		"chain ip nat NETAVARK-1D8721804F16F",
		"cgroup /sys/fs/cgroup/faultwin/r6: of run r6",
		"cgroup /sys/fs/cgroup/faultwin/r6/conmon: of run r6",
		"cgroup /sys/fs/cgroup/faultwin/r6/libpod-1: of run r6",
	}))

	// Without the described roots the same host holds only the cgroups,
	// which were judged before.
	g.Expect(criteria.Leftovers(dirty, snapshots.DefaultRoots("/var/lib/faultwin"))).To(Equal([]string{
		"cgroup /sys/fs/cgroup/faultwin/r6: of run r6",
		"cgroup /sys/fs/cgroup/faultwin/r6/conmon: of run r6",
		"cgroup /sys/fs/cgroup/faultwin/r6/libpod-1: of run r6",
	}))

	bad := roots
	bad.Shared = append(bad.Shared, "link [")
	g.Expect(criteria.Leftovers(clean, bad)).To(Equal([]string{`roots: malformed shared glob "link ["`}))
}

func TestPreflightNotesShared(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	in.Roots = podmanRoots(in.Roots)
	in.Preflight.Tables = netavark(false)
	in.Preflight.Cgroups = []string{"/sys/fs/cgroup/faultwin/r0/conmon"}
	v := criteria.Evaluate(in)
	g.Expect(v).To(HaveStatus(model.StatusPass))
	r, _ := v.Result(model.PRE)
	g.Expect(r).To(HaveEvidence("kept by design: chain ip filter NETAVARK_FORWARD"))
	g.Expect(r).To(HaveEvidence("kept by design: cgroup /sys/fs/cgroup/faultwin/r0/conmon"))

	in.Preflight.Tables = netavark(true)
	v = criteria.Evaluate(in)
	g.Expect(v).To(HaveStatus(model.StatusInvalid))
	g.Expect(v.Reason).To(Equal("preflight: 1 leftover of a faultwin run at preflight"))
}

// What the judge saw at the preflight with every supervisor's names, but
// the window's own roots do not show (another supervisor's stale socket),
// makes PRE fail as hostcheck would: the row says INVALID with it.
func TestPreflightOthersFailPRE(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusPass))
	in.PreflightOthers = []string{"socket /run/containerd/s/0123abcd: no process listens on it (a killed server's), declared by the driver"}
	v := criteria.Evaluate(in)
	g.Expect(v).To(HaveStatus(model.StatusInvalid))
	r, _ := v.Result(model.PRE)
	g.Expect(r).To(HaveEvidence("socket /run/containerd/s/0123abcd: no process listens on it (a killed server's), declared by the driver (seen with every supervisor's names, as hostcheck sees the host)"))
}
