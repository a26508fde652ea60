package review

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"faultwin/reports/rows"
)

func windowIDs(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("W%d", i))
	}
	return out
}

// TestShardPairsPartition: for several soak shapes and shard counts, the
// shards together hold every (window, pass) pair exactly once, shard sizes
// differ by at most one, each shard runs its pairs in pass-major order,
// and the same inputs give the same slices.
func TestShardPairsPartition(t *testing.T) {
	for _, nw := range []int{1, 2, 3, 5, 26} {
		for _, passes := range []int{1, 2, 3, 20} {
			ws := windowIDs(nw)
			all := AllPairs(ws, passes)
			for _, n := range []int{1, 2, 3, 4, 7} {
				seen := map[Pair]int{}
				lo, hi := len(all), 0
				for k := 1; k <= n; k++ {
					got := ShardPairs(ws, passes, Shard{k, n})
					if again := ShardPairs(ws, passes, Shard{k, n}); !reflect.DeepEqual(got, again) {
						t.Fatalf("%d windows x %d passes, shard %d/%d: not deterministic", nw, passes, k, n)
					}
					lo, hi = min(lo, len(got)), max(hi, len(got))
					last := -1
					for _, p := range got {
						seen[p]++
						i := (p.Pass-1)*nw + shardIndexOf(ws, p.Window)
						if i <= last {
							t.Fatalf("shard %d/%d runs %s out of pass-major order", k, n, p)
						}
						if ShardOf(i, n) != k {
							t.Fatalf("shard %d/%d holds %s, the rule gives shard %d", k, n, p, ShardOf(i, n))
						}
						last = i
					}
				}
				if len(seen) != len(all) {
					t.Errorf("%d windows x %d passes over %d shards: %d distinct pairs, want %d", nw, passes, n, len(seen), len(all))
				}
				for p, c := range seen {
					if c != 1 {
						t.Errorf("%d windows x %d passes over %d shards: %s held %d times", nw, passes, n, p, c)
					}
				}
				if hi-lo > 1 {
					t.Errorf("%d windows x %d passes over %d shards: sizes %d..%d, want balanced within one", nw, passes, n, lo, hi)
				}
			}
		}
	}
}

func shardIndexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

func TestShardPairsExample(t *testing.T) {
	// 3 windows, 2 passes, 2 shards: pairs 0..5 alternate.
	got := fmt.Sprint(ShardPairs([]string{"W1", "W2", "W3"}, 2, Shard{1, 2}))
	if want := "[W1 pass 1 W3 pass 1 W2 pass 2]"; got != want {
		t.Errorf("shard 1/2: %s, want %s", got, want)
	}
	got = fmt.Sprint(ShardPairs([]string{"W1", "W2", "W3"}, 2, Shard{2, 2}))
	if want := "[W2 pass 1 W1 pass 2 W3 pass 2]"; got != want {
		t.Errorf("shard 2/2: %s, want %s", got, want)
	}
}

func TestParseShard(t *testing.T) {
	for v, want := range map[string]Shard{"1/1": {1, 1}, "2/4": {2, 4}, " 4/4 ": {4, 4}} {
		if got, err := ParseShard(v); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for v, want := range map[string]string{
		"3/2": "--shard 3/2: k must be 1..n",
		"0/2": "--shard 0/2: k must be 1..n",
		"1/0": "--shard 1/0: n must be at least 1",
		"2":   "--shard 2: want k/n",
		"a/b": "--shard a/b: k and n must be whole numbers",
		"":    "want k/n",
	} {
		if _, err := ParseShard(v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q): %v, want %q", v, err, want)
		}
	}
}

func TestMarkPairsRefusesUnknownRule(t *testing.T) {
	m := rows.ShardMark{K: 1, N: 2, Passes: 2, Windows: []string{"W1"}, Rule: "round-robin-v0"}
	if _, err := MarkPairs(&m); err == nil || !strings.Contains(err.Error(), "round-robin-v0") {
		t.Errorf("unknown rule: %v", err)
	}
	m.Rule = ShardRule
	if p, err := MarkPairs(&m); err != nil || fmt.Sprint(p) != "[W1 pass 1]" {
		t.Errorf("MarkPairs = %v, %v", p, err)
	}
}
