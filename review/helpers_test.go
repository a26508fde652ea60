package review

import (
	"errors"
	"math"

	"faultwin/model"
)

type defWindow = model.Window

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func def0() (w defWindow) { return }

func nan() float64 { return math.NaN() }
