package render

import (
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// FromRows makes a File of rows already in memory, replaying them under
// the name path.
func FromRows(path string, rs []rows.Row) File {
	return File{Path: path, Rows: rs, Replay: review.ReplayRows(path, rs)}
}
