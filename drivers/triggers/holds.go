package triggers

import (
	"path"
	"strconv"

	"golang.org/x/sys/unix"
)

// holds reports whether pid has a path matching one of globs open, or as
// its cwd. The fd directory is read through the proc mount's fd, so a test
// can give it a fake /proc; each fd is a symlink to what it holds.
func (s *scanner) holds(pid int, globs []string) bool {
	dir := strconv.Itoa(pid)
	if target, err := s.readlink(dir + "/cwd"); err == nil && matchAny(globs, target) {
		return true
	}
	fd, err := unix.Openat(s.dirfd, dir+"/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var buf [8 << 10]byte
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err != nil || n <= 0 {
			return false
		}
		var names []string
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			if target, err := s.readlink(dir + "/fd/" + name); err == nil && matchAny(globs, target) {
				return true
			}
		}
	}
}

func (s *scanner) readlink(name string) (string, error) {
	var buf [unix.PathMax]byte
	n, err := unix.Readlinkat(s.dirfd, name, buf[:])
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func matchAny(globs []string, p string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, p); ok {
			return true
		}
	}
	return false
}
