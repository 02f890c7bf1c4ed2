package cardstest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Require is a small set of fail-now assertions with testify's names. The
// module's go.sum lacks testify's yaml dependency, so the card tests carry
// their own rather than change go.sum under other engineers.
type Require struct{}

func msg(extra []any) string {
	if len(extra) == 0 {
		return ""
	}
	if f, ok := extra[0].(string); ok {
		return ": " + fmt.Sprintf(f, extra[1:]...)
	}
	return ": " + fmt.Sprint(extra...)
}

func (Require) NoError(t testing.TB, err error, extra ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v%s", err, msg(extra))
	}
}

func (Require) Error(t testing.TB, err error, extra ...any) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an error, got nil%s", msg(extra))
	}
}

func (Require) ErrorContains(t testing.TB, err error, want string, extra ...any) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("expected an error containing %q, got %v%s", want, err, msg(extra))
	}
}

func (Require) ErrorIs(t testing.TB, err, target error, extra ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("expected an error wrapping %v, got %v%s", target, err, msg(extra))
	}
}

func (Require) Equal(t testing.TB, want, got any, extra ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("want %#v\n got %#v%s", want, got, msg(extra))
	}
}

func (Require) NotEqual(t testing.TB, a, b any, extra ...any) {
	t.Helper()
	if reflect.DeepEqual(a, b) {
		t.Fatalf("expected values to differ, both are %#v%s", a, msg(extra))
	}
}

func (Require) True(t testing.TB, v bool, extra ...any) {
	t.Helper()
	if !v {
		t.Fatalf("expected true%s", msg(extra))
	}
}

func (Require) False(t testing.TB, v bool, extra ...any) {
	t.Helper()
	if v {
		t.Fatalf("expected false%s", msg(extra))
	}
}

func (Require) Contains(t testing.TB, s, sub string, extra ...any) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("expected %q in:\n%s%s", sub, s, msg(extra))
	}
}

func (Require) NotContains(t testing.TB, s, sub string, extra ...any) {
	t.Helper()
	if strings.Contains(s, sub) {
		t.Fatalf("did not expect %q in:\n%s%s", sub, s, msg(extra))
	}
}

func (Require) Len(t testing.TB, v any, n int, extra ...any) {
	t.Helper()
	if got := reflect.ValueOf(v).Len(); got != n {
		t.Fatalf("expected length %d, got %d%s", n, got, msg(extra))
	}
}

func (Require) LessOrEqual(t testing.TB, a, b int, extra ...any) {
	t.Helper()
	if a > b {
		t.Fatalf("expected %d <= %d%s", a, b, msg(extra))
	}
}

func (Require) Empty(t testing.TB, v any, extra ...any) {
	t.Helper()
	if !reflect.ValueOf(v).IsZero() {
		t.Fatalf("expected empty, got %#v%s", v, msg(extra))
	}
}

func (Require) NotEmpty(t testing.TB, v any, extra ...any) {
	t.Helper()
	if reflect.ValueOf(v).IsZero() {
		t.Fatalf("expected a value%s", msg(extra))
	}
}

func (Require) NotNil(t testing.TB, v any, extra ...any) {
	t.Helper()
	if v == nil || reflect.ValueOf(v).IsNil() {
		t.Fatalf("expected non-nil%s", msg(extra))
	}
}

func (Require) NotSame(t testing.TB, a, b any, extra ...any) {
	t.Helper()
	if reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() {
		t.Fatalf("expected different pointers%s", msg(extra))
	}
}
