package main

import (
	"context"
	"io"
	"testing"
)

// BenchmarkReplayResults replays the checked-in results/ as a reviewer
// would (`faultwin replay results/`): go test -bench ReplayResults -run
// '^$' ./cmd/faultwin.
func BenchmarkReplayResults(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := run(context.Background(), io.Discard, []string{"replay", "../../results/"}); err != nil {
			b.Fatal(err)
		}
	}
}
