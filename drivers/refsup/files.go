package refsup

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"faultwin/drivers/hostview"
	"faultwin/internal/model"
)

// userData is a file of the user's own that the harness writes into a
// session before the trigger. refsup's sessions have the host's root as
// their image, so what a user keeps in one is what it wrote: this file,
// copied with the session's layer into each checkpoint and each restored
// root.
const userData = "faultwin/user-data"

// userDataSize is more than one page and more than a small copy buffer.
const userDataSize = 64 << 10

// skipped are the payload's own writes.
var skipped = []string{"faultwin/counter", "faultwin/counter.new"}

// listSession writes the user's file into the session w and lists the
// session's own files (under /faultwin, the payload's writes left out).
func (d *Driver) listSession(w model.Workload) {
	root, err := hostview.ProcessRoot(w)
	if err == nil {
		err = writeUserData(filepath.Join(root, userData))
	}
	if err != nil {
		d.files = append(d.files, model.Manifest{Of: model.OfImage, Workload: w.Name, Root: root, Files: []model.FileEntry{},
			Err: fmt.Sprintf("writing the user's file into %s: %v", w.Name, err)})
		return
	}
	d.files = append(d.files, hostview.ManifestOf(model.OfImage, w.Name, root, []string{"faultwin"}, skipped))
}

func writeUserData(p string) error {
	b := make([]byte, userDataSize)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o640)
}

// listCheckpoint lists a checkpoint's images and its saved layer, which
// refsup keeps after a restore.
func (d *Driver) listCheckpoint(session, ckpt string) {
	dir := filepath.Join(d.Root, d.run, "checkpoints", ckpt)
	d.files = append(d.files, hostview.ManifestOf(model.OfCheckpoint, session, dir, []string{"images", "upper"}, nil))
}
