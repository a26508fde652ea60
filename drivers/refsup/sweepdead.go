package refsup

import (
	"context"

	"faultwin/internal/model"
)

// SweepDead implements drivers.DeadSweeper: refsup's own sweep of a run
// left by a window that never finished, once (a window's second sweep
// checks the first; here it would only repeat it).
func (d *Driver) SweepDead(ctx context.Context, run string) ([]model.SweepReport, error) {
	d.run = run
	r, err := d.Sweep(ctx)
	if err != nil {
		return nil, err
	}
	return []model.SweepReport{r}, nil
}
