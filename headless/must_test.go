package headless_test

// Assertion helpers in the style of testify's require (stop at the first
// failure, say what was expected). testify itself cannot be used here: its
// v1.12 yaml dependency is missing from go.sum.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type musts struct{}

var must musts

func msg(args []any) string {
	if len(args) == 0 {
		return ""
	}
	if f, ok := args[0].(string); ok {
		return ": " + fmt.Sprintf(f, args[1:]...)
	}
	return ": " + fmt.Sprint(args...)
}

func (musts) NoError(t testing.TB, err error, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("want no error, got %v%s", err, msg(args))
	}
}

func (musts) Error(t testing.TB, err error, args ...any) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error, got nil%s", msg(args))
	}
}

func (musts) ErrorContains(t testing.TB, err error, sub string, args ...any) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), sub) {
		t.Fatalf("want an error containing %q, got %v%s", sub, err, msg(args))
	}
}

func (musts) ErrorIs(t testing.TB, err, target error, args ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("want an error wrapping %v, got %v%s", target, err, msg(args))
	}
}

func (musts) Equal(t testing.TB, want, got any, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("want %#v\n got %#v%s", want, got, msg(args))
	}
}

func (musts) JSONEq(t testing.TB, want, got string, args ...any) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("expected value %q is not JSON: %v", want, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("want JSON %s, got non-JSON %q%s", want, got, msg(args))
	}
	if !reflect.DeepEqual(w, g) {
		t.Fatalf("want JSON %s\n got JSON %s%s", want, got, msg(args))
	}
}

func contains(haystack any, needle any) bool {
	switch h := haystack.(type) {
	case string:
		return strings.Contains(h, needle.(string))
	case []byte:
		return bytes.Contains(h, []byte(needle.(string)))
	}
	v := reflect.ValueOf(haystack)
	switch v.Kind() {
	case reflect.Map:
		return v.MapIndex(reflect.ValueOf(needle)).IsValid()
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if reflect.DeepEqual(v.Index(i).Interface(), needle) {
				return true
			}
		}
	}
	return false
}

func (musts) Contains(t testing.TB, haystack, needle any, args ...any) {
	t.Helper()
	if !contains(haystack, needle) {
		t.Fatalf("want %v to contain %v%s", haystack, needle, msg(args))
	}
}

func (musts) NotContains(t testing.TB, haystack, needle any, args ...any) {
	t.Helper()
	if contains(haystack, needle) {
		t.Fatalf("want %v not to contain %v%s", haystack, needle, msg(args))
	}
}

func (musts) True(t testing.TB, v bool, args ...any) {
	t.Helper()
	if !v {
		t.Fatalf("want true, got false%s", msg(args))
	}
}

func (musts) False(t testing.TB, v bool, args ...any) {
	t.Helper()
	if v {
		t.Fatalf("want false, got true%s", msg(args))
	}
}

func (musts) Zero(t testing.TB, v any, args ...any) {
	t.Helper()
	if !reflect.ValueOf(v).IsZero() {
		t.Fatalf("want zero, got %v%s", v, msg(args))
	}
}

func (musts) NotNil(t testing.TB, v any, args ...any) {
	t.Helper()
	if v == nil || (reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil()) {
		t.Fatalf("want non-nil%s", msg(args))
	}
}

func (musts) Len(t testing.TB, v any, n int, args ...any) {
	t.Helper()
	if l := reflect.ValueOf(v).Len(); l != n {
		t.Fatalf("want length %d, got %d%s", n, l, msg(args))
	}
}

func (musts) Less(t testing.TB, a, b int, args ...any) {
	t.Helper()
	if a >= b {
		t.Fatalf("want %d < %d%s", a, b, msg(args))
	}
}

func (musts) Panics(t testing.TB, f func(), args ...any) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("want a panic%s", msg(args))
		}
	}()
	f()
}
