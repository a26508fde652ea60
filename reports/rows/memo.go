package rows

import "sync"

// memo keeps what the packages above decode of a row read from a file
// (its recorded criteria, the parts of its input a report reads), so a row
// is decoded once however many readers look at it. Copies of a row share
// it; a row built in memory has none and its readers decode each time. It
// is not part of the row's JSON nor of its hash.
type memo struct {
	mu sync.Mutex
	m  map[any]memoEntry
}

// memoEntry is a value with the Input and Criteria it was computed from:
// a row whose fields were replaced since does not get it.
type memoEntry struct {
	input, criteria *byte
	n, k            int
	v               any
}

func (r Row) entry() memoEntry {
	e := memoEntry{n: len(r.Input), k: len(r.Criteria)}
	if len(r.Input) > 0 {
		e.input = &r.Input[0]
	}
	if len(r.Criteria) > 0 {
		e.criteria = &r.Criteria[0]
	}
	return e
}

// Memo returns the value kept under key for r, computing it with f and
// keeping it the first time. key is a value of an unexported type of the
// caller's package, as for context keys. f must compute only from r's own
// Input and Criteria, which the memo is tied to.
func Memo[T any](r Row, key any, f func() T) T {
	if r.memo == nil {
		return f()
	}
	if v, ok := Recall[T](r, key); ok {
		return v
	}
	v := f()
	want := r.entry()
	want.v = v
	r.memo.mu.Lock()
	if r.memo.m == nil {
		r.memo.m = map[any]memoEntry{}
	}
	r.memo.m[key] = want
	r.memo.mu.Unlock()
	return v
}

// Recall returns the value kept under key for r, if one is.
func Recall[T any](r Row, key any) (T, bool) {
	var zero T
	if r.memo == nil {
		return zero, false
	}
	want := r.entry()
	r.memo.mu.Lock()
	e, ok := r.memo.m[key]
	r.memo.mu.Unlock()
	if !ok || e.input != want.input || e.n != want.n || e.criteria != want.criteria || e.k != want.k {
		return zero, false
	}
	return e.v.(T), true
}

// DropInput lets r's Input go once what its readers need of it is in its
// memo: Input becomes nil and the values kept for the Input r held stay
// tied to r, so they are still found. Copies of r made before keep theirs.
func (r *Row) DropInput() {
	if r.memo == nil {
		r.Input = nil
		return
	}
	old := r.entry()
	r.Input = nil
	now := r.entry()
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	for k, e := range r.memo.m {
		if e.input == old.input && e.n == old.n {
			e.input, e.n = now.input, now.n
			r.memo.m[k] = e
		}
	}
}
