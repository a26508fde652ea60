// Package host reads a scoped snapshots.Snapshot of the machine it runs on:
// the processes, mounts, links, nftables tables, X11 sockets, ledger files,
// CRIU leftovers, sysctls and cgroups that a faultwin run could own. It reads
// /proc, /sys, netlink and nfnetlink directly; the one command it runs is
// `criu --version`, for the host facts each row records (Facts).
//
// "Host" means the capturing process's own namespaces (pid, mnt, net); "in
// scope" for a path means snapshots.Roots.InScope: under the state root,
// under an extra dir, or under a ".criu.*" entry of the tmp dir, compared by
// whole path components.
//
// A process is recorded when any of these holds:
//   - an argv element starts with "faultwin:" (the run tag);
//   - its environment holds FAULTWIN_RUN (the value goes to RunEnv);
//   - its comm is "criu";
//   - its cwd, root or an open file is in scope;
//   - it is a decoy (pid, and start time when given, in Decoys.Processes);
//   - it lives in another pid namespace whose init (NSpid ending in 1) is
//     recorded;
//   - it holds a file open or mapped on a run filesystem (a tmpfs or
//     overlay mounted whole in scope, first there; Held lists them by
//     device and inode), read only while such a filesystem is mounted;
//   - it holds a file, its cwd or root through a mount a tie record names
//     in a run's own mount namespace (RecordedMount.NS): recorded with
//     Held as that mount's holder, not as in scope, so the criteria name
//     it and no sweep kills it;
//   - it lives in a net, ipc, uts, cgroup, user or time namespace, other
//     than the harness's and pid 1's, that a recorded process lives in, or
//     in a namespace an nsfs mount in scope pins; a kind is read for every
//     process only while a recorded process has a foreign one of it;
//   - it is a zombie whose parent is recorded (a zombie has no argv,
//     environment, cwd or files left to match);
//   - it could not be read fully (Unreadable says what and why): it cannot
//     be ruled out, so it stays, unconfirmed. The init of the harness's own
//     pid namespace is the exception: it predates every run. A process
//     refused for another cause than exiting is read again (rereadSteps);
//     one still refused whose readable parts tie it to no run is recorded
//     with SetAside saying why (aside.go), and the criteria note it.
//
// Kernel threads are skipped, and so are processes that exit during the
// read. Only in-scope open files are kept in Files.
//
// A mount is recorded when, in the host mount namespace, its mount point is
// in scope, its mount point or source contains ".criu.cgyard.", it matches a
// Roots.Netns glob (a described supervisor's named netns), or it is a decoy
// mount (exact path, in scope or not). For every recorded process in
// another mount namespace (one read per namespace) the same rules apply to
// /proc/<pid>/mountinfo, whose paths are as that process sees them; those
// mounts are Foreign with SeenVia set to the pid read.
//
// Links: host links whose name starts with Roots.LinkPrefix or matches a
// Roots.Links glob. Tables: every nftables table of the host network
// namespace, family spelled as nft(8) does, each with its chains that match
// a Roots.Chains glob (none without globs); in other network namespaces the
// faultwin and CRIU-* tables. X11: entries of Roots.X11Dir and
// ".X*-lock" files of Roots.TmpDir. CRIUTmp: ".criu.*" entries of
// Roots.TmpDir. Ledgers: ledger.json and *.ledger files up to three levels
// below the state root. Extra: entries up to two levels below each extra
// dir, plus each existing decoy file. Sysctls: Roots.Sysctls read from
// /proc/sys, keyed in dotted sysctl(8) form ("net.ipv4.ip_forward", see
// snapshots.SysctlKey). Cgroups: directories named "faultwin*" or "criu*" up
// to three levels below each hierarchy of /sys/fs/cgroup.
//
// Every list is sorted. What could not be read is named in
// Snapshot.Incomplete, so a criterion can refuse to judge rather than pass
// on missing evidence.
package host
