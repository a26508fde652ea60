package host

import (
	"errors"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"faultwin/snapshots"
)

// procmapQuery is the kernel's struct procmap_query (linux/fs.h, 6.11).
type procmapQuery struct {
	Size, QueryFlags, QueryAddr           uint64
	VMAStart, VMAEnd, VMAFlags, PageSize  uint64
	VMAOffset, Inode                      uint64
	DevMajor, DevMinor, NameSize, BIDSize uint32
	NameAddr, BIDAddr                     uint64
}

const (
	// procmapQueryIoctl is _IOWR('f', 17, struct procmap_query).
	procmapQueryIoctl = 0xC0686611
	// Flags: the covering or next mapping, file-backed only.
	procmapCoveringOrNext = 0x10
	procmapFileBacked     = 0x20
)

// queryMaps lists the file mappings of the maps file at path that lie on
// devs, one ioctl per mapping. ok is false when the kernel lacks the
// ioctl, or the file cannot be opened for it, and the text must be read.
func queryMaps(path string, devs map[uint64]bool) (out []snapshots.Held, ok bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	for addr := uint64(0); ; {
		q := procmapQuery{Size: uint64(unsafe.Sizeof(procmapQuery{})), QueryFlags: procmapCoveringOrNext | procmapFileBacked, QueryAddr: addr}
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), procmapQueryIoctl, uintptr(unsafe.Pointer(&q)))
		switch {
		case errno == unix.ENOENT:
			return out, true // no mapping at or after addr
		case errors.Is(errno, unix.ENOTTY) || errors.Is(errno, unix.EINVAL):
			return nil, false
		case errno != 0:
			return out, true // gone meanwhile: what was read stands
		}
		if dev := unix.Mkdev(q.DevMajor, q.DevMinor); devs[dev] {
			h := snapshots.Held{Dev: devString(dev), Ino: q.Inode, Map: true}
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
		addr = q.VMAEnd
	}
}
