package definitions

import (
	"errors"

	"faultwin/drivers/refsup"
	"faultwin/internal/model"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// testSpecs are the drivers the loader's tests check definitions against.
var testSpecs = []model.DriverSpec{refsup.Spec()}
