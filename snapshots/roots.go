package snapshots

import "faultwin/internal/model"

// Roots tells a capture where faultwin-owned things can live. Everything a
// snapshot holds is found through these roots, so a snapshot stays small
// enough to store in every row.
type Roots struct {
	StateRoot   string   `json:"state_root"`   // every run's state dir is <StateRoot>/<run>
	Extra       []string `json:"extra"`        // more dirs to watch (decoys)
	LinkPrefix  string   `json:"link_prefix"`  // "dvh"
	TablePrefix string   `json:"table_prefix"` // "faultwin"
	X11Dir      string   `json:"x11_dir"`      // "/tmp/.X11-unix"
	TmpDir      string   `json:"tmp_dir"`      // "/tmp": CRIU leaves .criu.* here
	Sysctls     []string `json:"sysctls"`      // e.g. "net/ipv4/ip_forward"

	// What a supervisor other than refsup makes under host-global names,
	// as its driver description declares (path.Match globs). Empty for
	// refsup, so rows recorded before these existed read back unchanged.
	// Windows run one at a time on a host the preflight found clean, so a
	// match that appears during a window is that window's run's.
	Links  []string `json:"links,omitempty"`  // link names: "podman0", "veth*"
	Netns  []string `json:"netns,omitempty"`  // named netns mount points: "/run/netns/netns-*"
	Chains []string `json:"chains,omitempty"` // nft chains in any host table: "NETAVARK*"
	// Sockets are unix socket paths a driver binds under host-global names
	// ("/run/containerd/s/*"); a capture records each with whether a
	// process listens on it.
	Sockets []string `json:"sockets,omitempty"`
	// State are globs of the entries where the supervisor keeps its
	// workloads' state (model.HostNames.State); "{state}" stands for any
	// run's state dir, <StateRoot>/*.
	State []string `json:"state,omitempty"`
	// Shared are findings the supervisor keeps for all its runs by design
	// (globs over finding keys such as "chain ip filter NETAVARK_FORWARD" or
	// "cgroup /faultwin/*/conmon"): captured and shown, never judged as a
	// run's leftover. The driver description must say why for each.
	Shared []string `json:"shared,omitempty"`
	// RunCgroupsLeft makes a dead run's cgroup a leftover at the preflight
	// whatever Shared says: kept by design from one run to the next is a
	// host-global name, never a cgroup named for one run. Rows recorded
	// before it existed lack it and judge as they were judged.
	RunCgroupsLeft bool `json:"run_cgroups_left,omitempty"`
	// ByProvenance judges the host-global names above by evidence, never
	// by their names alone: a link, named netns, chain, table, socket or
	// state entry outside the state root is a run's only when a tie
	// record claims it by an identity the kernel does not reuse (Claim);
	// any other match is someone else's, named and left alone. Rows
	// recorded before it lack it and judge every match as a run's.
	ByProvenance bool `json:"by_provenance,omitempty"`
	// Records is the directory of the runs' tie records (TieRecord), one
	// <run>.json each; empty in rows recorded before it existed.
	Records string `json:"records,omitempty"`
}

// DefaultRoots returns the roots of a refsup state root.
func DefaultRoots(stateRoot string) Roots {
	return Roots{
		StateRoot:   stateRoot,
		LinkPrefix:  model.LinkPrefix,
		TablePrefix: model.TablePrefix,
		X11Dir:      "/tmp/.X11-unix",
		TmpDir:      "/tmp",
		Sysctls:     []string{model.IPForward},

		RunCgroupsLeft: true,
		ByProvenance:   true,
		Records:        RecordsDir(stateRoot),
	}
}
