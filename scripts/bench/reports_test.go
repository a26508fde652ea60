package main

import (
	"strings"
	"testing"
	"time"
)

// Each figure's median is taken on its own: the median run by wall
// clock need not be the median by memory.
func TestMedianCost(t *testing.T) {
	got := medianCost([]cost{
		{wall: 3 * time.Second, cpu: 1 * time.Second, rssKiB: 300, bytes: 5},
		{wall: 1 * time.Second, cpu: 5 * time.Second, rssKiB: 100, bytes: 5},
		{wall: 2 * time.Second, cpu: 2 * time.Second, rssKiB: 900, bytes: 5},
	})
	want := cost{wall: 2 * time.Second, cpu: 2 * time.Second, rssKiB: 300, bytes: 5}
	if got != want {
		t.Errorf("median %+v, want %+v", got, want)
	}
}

// The line gives this build's figures, the base's and this/base.
func TestCostLine(t *testing.T) {
	nw := cost{wall: time.Second, cpu: 2 * time.Second, rssKiB: 150 << 10, bytes: 4_000_000}
	old := cost{wall: 4 * time.Second, cpu: 8 * time.Second, rssKiB: 300 << 10, bytes: 5_000_000}
	got := costLine("report", nw, &old)
	for _, want := range []string{
		"report  this build: 1.00 s wall, 2.00 s CPU, 150 MiB peak RSS, 4000000 bytes",
		"base:       4.00 s wall, 8.00 s CPU, 300 MiB peak RSS, 5000000 bytes",
		"this/base:  wall 0.25, CPU 0.25, RSS 0.50, bytes 0.80",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := costLine("replay", nw, nil); strings.Contains(got, "base") {
		t.Errorf("no base ran, yet %q", got)
	}
}
