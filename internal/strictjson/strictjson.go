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
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Decode decodes b, which must hold exactly one JSON value, into v, a
// pointer to a zero value. Unknown fields are errors, and so is anything
// but white space after the value; what names the value in that error
// ("data after the row"). Empty input is an error too.
//
// The decoding is encoding/json's (field names matched without regard to
// case, duplicate names and invalid UTF-8 accepted as it accepts them),
// done by encoding/json/v2 with its v1 options: one pass over the input
// instead of encoding/json's two or three, which a report reading hundreds
// of megabytes of rows feels. Only a success is taken from it: on any
// error v is reset and encoding/json decodes again, so the error and what
// was decoded before it are encoding/json's own.
func Decode(b []byte, v any, what string) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty")
	}
	if jsonv2.Unmarshal(b, v, strict) == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
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

// strict is encoding/json's decoding with DisallowUnknownFields.
var strict = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.RejectUnknownMembers(true))

// DecodeUnique decodes b into v as Decode does when b also holds no
// object with a name twice, and returns an error otherwise, without
// Decode's message: it is for a fast path whose caller, on any error,
// decodes again the way whose errors it reports. Refusing duplicates keeps
// the fast path's value the one the slow path gives.
func DecodeUnique(b []byte, v any) error {
	return jsonv2.Unmarshal(b, v, unique)
}

var unique = jsonv2.JoinOptions(strict, jsontext.AllowDuplicateNames(false))
