package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// recorder is a driver that records what reached it; every method it does
// not define panics (the embedded nil Driver), so a rule that calls the
// driver where it should refuse shows up.
type recorder struct {
	Driver
	enqueued *WorkEnqueueParams
	created  *ScheduleCreateParams
}

func (r *recorder) WorkEnqueue(_ context.Context, p *WorkEnqueueParams) (*WorkEnqueueResult, error) {
	r.enqueued = p
	return &WorkEnqueueResult{Item: &WorkItem{Kind: p.Kind}, Inserted: true}, nil
}

func (r *recorder) ScheduleCreate(_ context.Context, p *ScheduleCreateParams) (*Schedule, error) {
	r.created = p
	return &Schedule{ID: p.ID, Name: p.Name}, nil
}

func TestRulesFillDefaultsOnACopy(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	d := &recorder{}
	st := New(d, Options{Now: func() time.Time { return now }})

	p := &WorkEnqueueParams{Kind: "turn"}
	if _, err := st.WorkEnqueue(context.Background(), p); err != nil {
		t.Fatalf("enqueueing: %v", err)
	}
	got := d.enqueued
	if got == p {
		t.Fatal("the driver got the caller's params struct; the rules must work on a copy")
	}
	if !got.Now.Equal(now) || !got.RunAt.Equal(now) || got.MaxAttempts != DefaultMaxAttempts || string(got.Payload) != "{}" {
		t.Fatalf("defaults reaching the driver: Now %v RunAt %v MaxAttempts %d Payload %s; want %v, %v, %d, {}",
			got.Now, got.RunAt, got.MaxAttempts, got.Payload, now, now, DefaultMaxAttempts)
	}
	if !p.Now.IsZero() || p.MaxAttempts != 0 || p.Payload != nil {
		t.Fatalf("the caller's params were changed: %+v", p)
	}
}

func TestRulesRefuseBadParamsBeforeTheDriver(t *testing.T) {
	st := New(&recorder{}, Options{})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"empty kind", func() error { _, err := st.WorkEnqueue(ctx, &WorkEnqueueParams{}); return err }, "empty Kind"},
		{"bad payload", func() error {
			_, err := st.WorkEnqueue(ctx, &WorkEnqueueParams{Kind: "turn", Payload: []byte("{nope")})
			return err
		}, "Payload is not valid JSON"},
		{"unknown entry kind", func() error {
			_, err := st.EntryAppend(ctx, &EntryAppendParams{Kind: "bogus"})
			return err
		}, `unknown kind "bogus"`},
		{"schedule in a thread", func() error {
			_, err := st.ScheduleCreate(ctx, &ScheduleCreateParams{Kind: ScheduleRoutine, Agent: "a", Name: "n", Spec: "every 1h",
				Place: Place{Platform: "slack", Channel: "C1", Thread: "1.2"}})
			return err
		}, "Place.Thread"},
		{"binding without a place", func() error {
			_, err := st.BindingEnsure(ctx, &BindingEnsureParams{})
			return err
		}, "no Platform"},
		{"claim without a limit", func() error {
			_, err := st.WorkClaim(ctx, &WorkClaimParams{Worker: "w", LeaseTTL: time.Second})
			return err
		}, "Limit must be positive"},
	} {
		err := c.call()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrInvalid saying %q", c.name, err, c.want)
		}
	}
}

func TestDecideAppend(t *testing.T) {
	seq := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		last   int64
		expect *int64
		want   AppendAction
		err    error
	}{
		{0, nil, AppendNext, nil},
		{4, nil, AppendNext, nil},
		{4, seq(5), AppendNext, nil},
		{4, seq(3), AppendFork, nil},
		{4, seq(1), AppendFork, nil},
		{4, seq(7), 0, ErrConflict},
	} {
		got, err := DecideAppend(c.last, c.expect)
		if !errors.Is(err, c.err) || (c.err == nil && got != c.want) {
			t.Errorf("DecideAppend(%d, %v) = %v, %v; want %v, %v", c.last, c.expect, got, err, c.want, c.err)
		}
	}
}
