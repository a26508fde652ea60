package render

import (
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// FromRows makes a File of rows already in memory, replaying them under
// the name path.
func FromRows(path string, rs []rows.Row) File {
	f := review.ReplayRows(path, rs)
	return File{Path: path, Records: f.Records, Replay: f}
}
