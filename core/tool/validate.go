package tool

import (
	"errors"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ValidationError is an argument that failed the input schema. Field is the
// path of the offending value in the arguments ("series[2].points[0].y"),
// empty when the failure is about the whole object (a missing or unexpected
// property, which Reason then names).
type ValidationError struct {
	Field  string
	Reason string
	Err    error // the validator's own error
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func (e *ValidationError) Unwrap() error { return e.Err }

const maxReasonLen = 300

// describeValidation turns the validator's error, which names schema
// locations ("/properties/series/items/..."), into one that names the
// argument a model must fix, with array indexes.
func describeValidation(root *jsonschema.Schema, instance any, err error) error {
	// The validator wraps once per schema it descends into, each layer
	// "validating <pointer>: <inner>". The innermost is the reason; the
	// layer just above it carries the deepest pointer.
	var chain []error
	for e := err; e != nil; e = errors.Unwrap(e) {
		chain = append(chain, e)
	}
	leaf := chain[len(chain)-1]
	// The reason quotes the offending value, which may be a whole document
	// the model sent; the model needs the gist, not its own text back.
	ve := &ValidationError{Reason: truncate(leaf.Error(), maxReasonLen), Err: err}
	if len(chain) < 2 {
		return ve
	}
	msg := chain[len(chain)-2].Error()
	pointer, ok := strings.CutPrefix(msg, "validating ")
	if !ok {
		return ve
	}
	pointer, ok = strings.CutSuffix(pointer, ": "+leaf.Error())
	if !ok || pointer == "root" {
		return ve
	}
	ve.Field = fieldPath(root, instance, pointer)
	return ve
}

// fieldPath maps a schema pointer to the instance path, finding for each
// array the first element that fails its item schema. Where it cannot
// follow (a combinator such as anyOf), it stops and names what it has.
func fieldPath(s *jsonschema.Schema, instance any, pointer string) string {
	segs := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	var b strings.Builder
	for i := 0; i < len(segs); i++ {
		switch seg := unescapePointer(segs[i]); {
		case seg == "properties" && i+1 < len(segs):
			name := unescapePointer(segs[i+1])
			i++
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
			if s == nil {
				continue
			}
			s = s.Properties[name]
			obj, _ := instance.(map[string]any)
			instance = obj[name]
		case seg == "items":
			arr, _ := instance.([]any)
			idx := firstInvalid(s.Items, arr)
			if idx < 0 {
				b.WriteString("[]")
				s, instance = s.Items, nil
				continue
			}
			b.WriteString("[" + strconv.Itoa(idx) + "]")
			s, instance = s.Items, arr[idx]
		default:
			return b.String()
		}
		if s == nil {
			return b.String()
		}
	}
	return b.String()
}

// firstInvalid returns the index of the first element that fails the item
// schema, or -1 when it cannot tell. It runs only after a failure, so the
// cost of resolving the sub-schema does not touch the happy path.
func firstInvalid(items *jsonschema.Schema, arr []any) int {
	if items == nil || len(arr) == 0 {
		return -1
	}
	r, err := items.Resolve(nil)
	if err != nil {
		return -1
	}
	for i, v := range arr {
		if r.Validate(v) != nil {
			return i
		}
	}
	return -1
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
