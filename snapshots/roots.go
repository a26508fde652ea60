package snapshots

import "faultwin/model"

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
	}
}
