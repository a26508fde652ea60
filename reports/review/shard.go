package review

import (
	"fmt"
	"strconv"
	"strings"

	"faultwin/reports/rows"
)

// ShardRule names the rule ShardPairs applies; a shard's open marker
// records it, and a merge refuses shards recorded under another rule.
//
// The rule: the soak's (window, pass) pairs are numbered i = 0, 1, ... in
// pass-major order (pass 1's windows in natural order, then pass 2's, ...),
// and pair i goes to shard (i mod n)+1. Every shard's count is the total
// divided by n, rounded down or up (balanced to within one pair), and a
// shard runs its pairs in that same order. When n divides the number of
// windows, each window stays on one shard for every pass; otherwise the
// windows rotate over the shards from pass to pass.
const ShardRule = "pass-major-mod-n"

// Pair is one (window, pass) of a soak; Pass is 1-based.
type Pair struct {
	Window string
	Pass   int
}

func (p Pair) String() string { return fmt.Sprintf("%s pass %d", p.Window, p.Pass) }

// Shard is k of n (1 <= k <= n).
type Shard struct{ K, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// ParseShard reads "k/n", as `soak --shard` takes it.
func ParseShard(v string) (Shard, error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard %s: want k/n, e.g. 2/4 (shard 2 of 4)", v)
	}
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	switch {
	case kerr != nil || nerr != nil:
		return Shard{}, fmt.Errorf("--shard %s: k and n must be whole numbers, e.g. 2/4", v)
	case n < 1:
		return Shard{}, fmt.Errorf("--shard %s: n must be at least 1", v)
	case k < 1 || k > n:
		return Shard{}, fmt.Errorf("--shard %s: k must be 1..n", v)
	}
	return Shard{k, n}, nil
}

// AllPairs returns the pairs of a soak of passes over windows, in
// pass-major order: the numbering ShardRule uses.
func AllPairs(windows []string, passes int) []Pair {
	out := make([]Pair, 0, len(windows)*max(passes, 0))
	for p := 1; p <= passes; p++ {
		for _, w := range windows {
			out = append(out, Pair{w, p})
		}
	}
	return out
}

// ShardOf returns the 1-based shard pair number i (0-based, pass-major)
// goes to under ShardRule.
func ShardOf(i, n int) int { return i%n + 1 }

// ShardPairs returns the pairs shard s runs, in the order it runs them.
func ShardPairs(windows []string, passes int, s Shard) []Pair {
	var out []Pair
	for i, p := range AllPairs(windows, passes) {
		if ShardOf(i, s.N) == s.K {
			out = append(out, p)
		}
	}
	return out
}

// MarkPairs returns the pairs of the shard a session's open marker
// records, or an error if the marker's facts are not a shard's.
func MarkPairs(m *rows.ShardMark) ([]Pair, error) {
	switch {
	case m.Rule != ShardRule:
		return nil, fmt.Errorf("shard rule %q, this faultwin knows %q", m.Rule, ShardRule)
	case m.N < 1 || m.K < 1 || m.K > m.N:
		return nil, fmt.Errorf("shard %d/%d: k must be 1..n", m.K, m.N)
	case m.Passes < 1:
		return nil, fmt.Errorf("shard %d/%d: %d passes", m.K, m.N, m.Passes)
	case len(m.Windows) == 0:
		return nil, fmt.Errorf("shard %d/%d: no windows", m.K, m.N)
	}
	return ShardPairs(m.Windows, m.Passes, Shard{m.K, m.N}), nil
}

// ShardPasses numbers the rows of a file written by `soak --shard` with
// the passes the shard rule gives them. ok is false, and the numbers
// meaningless, unless every row of the file is in a shard session and fits
// its shard's plan; use Passes then.
func ShardPasses(c *rows.Contents) (passes []int, ok bool) {
	passes = make([]int, len(c.Rows))
	seen := 0
	for i, mk := range c.Markers {
		if mk.Open == nil || mk.Open.Shard == nil {
			continue
		}
		pairs, err := MarkPairs(mk.Open.Shard)
		if err != nil {
			return nil, false
		}
		j := 0
		for r, line := range c.RowLines {
			if line < mk.Line || (i+1 < len(c.Markers) && line > c.Markers[i+1].Line) {
				continue
			}
			if j >= len(pairs) || c.Rows[r].Window.ID != pairs[j].Window {
				return nil, false
			}
			passes[r] = pairs[j].Pass
			j++
			seen++
		}
	}
	return passes, seen == len(c.Rows) && seen > 0
}
