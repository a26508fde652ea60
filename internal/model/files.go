package model

import (
	"strconv"
	"strings"
)

// AftermathFiles is the aftermath version from which the files the user
// keeps are checked: before the trigger the harness lists the workload's
// files as its image gives them and the checkpoint's files (Manifests);
// after the user's recovery it compares the target's root as the target
// sees it (Workload.Files) and the checkpoint (Aftermath.Checkpoint).
const AftermathFiles = 4

// What a manifest lists.
const (
	OfImage      = "image"      // the workload's files as its image gives them
	OfCheckpoint = "checkpoint" // a checkpoint's files on the host
)

// Manifest is a list of files under Root, read before the trigger.
type Manifest struct {
	Of       string `json:"of"` // Of*
	Workload string `json:"workload,omitempty"`
	Root     string `json:"root"`
	// Include are the paths under Root listed (all of Root when none);
	// Skip those left out: what the payload itself writes.
	Include []string    `json:"include,omitempty"`
	Skip    []string    `json:"skip,omitempty"`
	Files   []FileEntry `json:"files"`
	Err     string      `json:"err,omitempty"`
}

// FileEntry is one file of a manifest.
type FileEntry struct {
	Path   string `json:"path"` // relative to the manifest's root
	Type   string `json:"type"` // file, dir, symlink, device, fifo, socket
	Size   int64  `json:"size,omitempty"`
	Mode   string `json:"mode"`             // permission bits, octal
	SHA256 string `json:"sha256,omitempty"` // of a regular file's bytes
	Link   string `json:"link,omitempty"`   // a symlink's target
}

// Damage is one file of a manifest found missing or changed.
type Damage struct {
	Of   string `json:"of"`
	Path string `json:"path"`
	What string `json:"what"` // "missing", "content changed", "type file -> dir", ...
}

// FilesCheck is a comparison of a manifest with the tree found after.
type FilesCheck struct {
	Of      string   `json:"of"`
	Root    string   `json:"root"` // where it was read after
	Checked int      `json:"checked"`
	Damage  []Damage `json:"damage,omitempty"`
	Err     string   `json:"err,omitempty"` // why it could not be read
}

// Text is the check as a line of evidence.
func (c FilesCheck) Text() string {
	switch {
	case c.Err != "":
		return c.Of + " files not checked: " + c.Err
	case len(c.Damage) == 0:
		return c.Of + ": " + strconv.Itoa(c.Checked) + " files, all present and unchanged"
	}
	return c.Of + ": " + strconv.Itoa(len(c.Damage)) + " of " + strconv.Itoa(c.Checked) + " files damaged: " + DamageText(c.Damage, 5)
}

// DamageText names up to n damaged files.
func DamageText(ds []Damage, n int) string {
	var parts []string
	for i, d := range ds {
		if i == n {
			parts = append(parts, "and "+strconv.Itoa(len(ds)-n)+" more")
			break
		}
		parts = append(parts, d.Path+" "+d.What)
	}
	return strings.Join(parts, "; ")
}

// ManifestOf is the manifest of what of workload (of a checkpoint: its
// workload is the one checkpointed).
func (a *Aftermath) ManifestOf(of, workload string) (Manifest, bool) {
	for _, m := range a.Manifests {
		if m.Of == of && (workload == "" || m.Workload == workload) {
			return m, true
		}
	}
	return Manifest{}, false
}
