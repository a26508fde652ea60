package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2/types"

	"faultwin/drivers/catalog"
	"faultwin/internal/model"
	"faultwin/reports/rows"
	"faultwin/windows/definitions"
)

// LoadWindows loads the window definitions in dir, each checked against the
// driver it names.
func LoadWindows(dir string) ([]model.Window, error) {
	return definitions.Load(dir, catalog.Specs())
}

// Select keeps the windows a ginkgo label filter matches ("" keeps all), so
// `faultwin run` and `ginkgo run ./windows` pick the same ones. A filter
// that keeps nothing is an error: zero windows is never a pass.
func Select(ws []model.Window, filter string) ([]model.Window, error) {
	if filter == "" {
		return ws, nil
	}
	lf, err := types.ParseLabelFilter(filter)
	if err != nil {
		return nil, fmt.Errorf("label filter %q: %w", filter, err)
	}
	var out []model.Window
	for _, w := range ws {
		if lf(w.SelectionLabels()) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("label filter %q: %w (of %d registered)", filter, ErrNoWindows, len(ws))
	}
	return out, nil
}

// Session is what an invocation that runs windows holds: a runner, the
// provenance its rows carry and the open results file (locked, so two
// invocations cannot interleave rows).
type Session struct {
	*Runner
	Prov    *Provenance
	Rows    *rows.Writer
	Results string
}

// Open builds a runner from cfg and opens results for appending, with
// provenance read from the git work tree at repo (nil prov) or prov. The
// supervisor's binary must exist and the state root is made if missing.
// The session's rows are one session of the file (rows.Writer): a results
// file whose last session was never sealed (the harness that wrote it died)
// is refused, with the way out.
func Open(cfg Config, repo, results string, prov *Provenance) (*Session, error) {
	// No refsup binary is needed when only described supervisors run (the
	// podman suite); a refsup window then fails to start its supervisor and
	// says so in its ERROR row.
	if cfg.Bin != "" {
		// A driver starts the supervisor from its own working directory,
		// where a relative path means something else.
		abs, err := filepath.Abs(cfg.Bin)
		if err != nil {
			return nil, fmt.Errorf("supervisor binary %q: %w", cfg.Bin, err)
		}
		cfg.Bin = abs
		if _, err := os.Stat(cfg.Bin); err != nil {
			return nil, fmt.Errorf("refsup binary: %w (build it with `make build` or pass --refsup)", err)
		}
	}
	if err := os.MkdirAll(cfg.StateRoot, 0o755); err != nil {
		return nil, fmt.Errorf("state root: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(results), 0o755); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	w, err := rows.Open(results)
	if errors.Is(err, rows.ErrUnsealed) {
		return nil, fmt.Errorf("%w. See its rows with `faultwin replay %s`; then seal it as unfinished with `faultwin seal --unfinished --reason WHY %s` and run again, or write to another file (--results, RESULTS=)", err, results, results)
	}
	if err != nil {
		return nil, err
	}
	if prov == nil {
		prov = NewProvenance(repo, "out", "results")
	}
	return &Session{Runner: New(cfg), Prov: prov, Rows: w, Results: results}, nil
}

// StateRoot is where the session's runs keep their state.
func (s *Session) StateRoot() string {
	if s.Runner == nil {
		return model.DefaultStateRoot
	}
	return s.Roots.StateRoot
}

// Record turns an outcome into its row and appends it.
func (s *Session) Record(o *Outcome) (*rows.Row, error) {
	row, err := s.Prov.Row(o)
	if err != nil {
		return nil, fmt.Errorf("building row: %w", err)
	}
	if err := s.Rows.Append(row); err != nil {
		return nil, fmt.Errorf("writing row to %s: %w", s.Results, err)
	}
	return row, nil
}

// RunAndRecord runs w once and appends its row.
func (s *Session) RunAndRecord(ctx context.Context, w model.Window) (*Outcome, *rows.Row, error) {
	o, err := s.Run(ctx, w)
	if err != nil {
		return nil, nil, fmt.Errorf("window %s: %w", w.ID, err)
	}
	row, err := s.Record(o)
	if err != nil {
		return o, nil, fmt.Errorf("window %s: %w", w.ID, err)
	}
	return o, row, nil
}

// Seal ends the session's rows with a seal carrying note (why the run
// stopped early, say); Close seals with no note if Seal was not called.
func (s *Session) Seal(note string) error { return s.Rows.Seal(note) }

// Close seals the session's rows, if it wrote any, and closes the results
// file. A harness killed before Close leaves the file unsealed.
func (s *Session) Close() error { return s.Rows.Close() }
