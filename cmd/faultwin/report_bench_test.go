package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReportResults renders the checked-in results/ as a reviewer
// would (`faultwin report results/ --out r.html`), and reports the page's
// size: go test -bench ReportResults -run '^$' ./cmd/faultwin.
func BenchmarkReportResults(b *testing.B) {
	for _, format := range []string{"html", "md"} {
		b.Run(format, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "r."+format)
			for i := 0; i < b.N; i++ {
				if err := run(context.Background(), io.Discard, []string{"report", "--out", out, "../../results/"}); err != nil && !isStatus(err) {
					b.Fatal(err)
				}
			}
			if st, err := os.Stat(out); err == nil {
				b.ReportMetric(float64(st.Size()), "bytes")
			}
		})
	}
}

// isStatus reports whether err is only the report's exit status (the rows
// hold FAILs), not a failure to write it.
func isStatus(err error) bool {
	_, ok := err.(exitCoder)
	return ok
}
