// Package strictjson is the one strict JSON decoding rule of the harness:
// a stored record decodes into its type completely or not at all. A field
// the type does not know is an error (it would be evidence nobody judged,
// and dropped on re-encoding it would break a hash), and so is anything
// after the one value. It imports nothing of the project.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decode decodes b, which must hold exactly one JSON value, into v. Unknown
// fields are errors, and so is anything but white space after the value;
// what names the value in that error ("data after the row"). Empty input is
// an error too.
func Decode(b []byte, v any, what string) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the %s", what)
	}
	return nil
}
