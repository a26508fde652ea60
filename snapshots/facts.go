package snapshots

// Host is what about the machine could change a result: the facts a row
// records beside its snapshots (read by snapshots/host.Facts).
type Host struct {
	Kernel        string `json:"kernel"`         // "6.18.0-..."
	Arch          string `json:"arch"`           // GOARCH
	CgroupVersion string `json:"cgroup_version"` // "v1", "v2", "hybrid"
	CRIUVersion   string `json:"criu_version"`   // "4.2.1"; "" when absent
	// Distro is the distribution's PRETTY_NAME (/etc/os-release).
	Distro string `json:"distro,omitempty"`
	// Versions are what the supervisor's components print as their
	// version, by command ("runc": "runc version 1.1.5"), for a driver
	// that names them.
	Versions   map[string]string `json:"versions,omitempty"`
	Cores      int               `json:"cores"`
	MemBytes   uint64            `json:"mem_bytes"`
	LoadBefore [3]float64        `json:"load_before"` // 1, 5, 15 minute load averages
	LoadAfter  [3]float64        `json:"load_after"`
	// Missing says which facts could not be read, and why.
	Missing []string `json:"missing,omitempty"`
}
