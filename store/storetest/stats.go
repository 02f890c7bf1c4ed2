package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) statsTests() []namedTest {
	return []namedTest{
		{"WorkCount", s.testWorkCount},
		{"ApprovalCount", s.testApprovalCount},
		{"ApprovalCountInvalid", s.testApprovalCountInvalid},
	}
}

// testWorkCount puts items of two kinds in every state and checks the
// counts: available, running and failed by kind, done left out.
func (s suite) testWorkCount(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()

	empty, err := st.WorkCount(ctx)
	noErr(t, err, "counting work in an empty store")
	eq(t, len(empty), 0, "rows for an empty queue")

	enqueue := func(kind string, maxAttempts int) *store.WorkItem {
		t.Helper()
		res, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind, MaxAttempts: maxAttempts, Now: clk.Now()})
		noErr(t, err, "enqueueing %s", kind)
		return res.Item
	}
	claim := func(kind string) *store.WorkItem {
		t.Helper()
		items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w", Kinds: []string{kind}, Limit: 1, LeaseTTL: time.Minute, Now: clk.Now()})
		noErr(t, err, "claiming %s", kind)
		if len(items) != 1 {
			t.Fatalf("claiming %s: got %d items, want 1", kind, len(items))
		}
		return items[0]
	}
	// turn: 3 available, 1 running, 1 done, 1 failed for good.
	for range 6 {
		enqueue("turn", 1)
	}
	done := claim("turn")
	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: done.ID, Worker: "w", Now: clk.Now()})
	noErr(t, err, "completing a turn")
	failed := claim("turn")
	_, err = st.WorkFail(ctx, &store.WorkFailParams{ID: failed.ID, Worker: "w", Error: "boom", RetryAt: clk.Now(), Now: clk.Now()})
	noErr(t, err, "failing a turn on its last attempt")
	claim("turn")
	// deliver: 1 available.
	enqueue("deliver", 3)

	got, err := st.WorkCount(ctx)
	noErr(t, err, "counting work")
	want := []store.WorkDepth{
		{Kind: "deliver", State: store.WorkAvailable, Count: 1},
		{Kind: "turn", State: store.WorkAvailable, Count: 3},
		{Kind: "turn", State: store.WorkFailed, Count: 1},
		{Kind: "turn", State: store.WorkRunning, Count: 1},
	}
	gotVals := make([]store.WorkDepth, len(got))
	for i, d := range got {
		gotVals[i] = *d
	}
	deepEq(t, gotVals, want, "work counts by kind and state, in kind then state order, done left out")
}

// testApprovalCount counts pending approvals: decided and expired ones are
// not, nor one whose expiry has passed but that no sweep has marked yet.
func (s suite) testApprovalCount(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	conv := newConversation(t, st, clk)
	now := clk.Now()
	createApproval(t, st, conv.ID, "call-"+uuid.NewString(), now, now.Add(time.Hour))
	createApproval(t, st, conv.ID, "call-"+uuid.NewString(), now, now.Add(2*time.Hour))
	short := createApproval(t, st, conv.ID, "call-"+uuid.NewString(), now, now.Add(time.Minute))
	decided := createApproval(t, st, conv.ID, "call-"+uuid.NewString(), now, now.Add(time.Hour))
	_, err := st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: decided.ID, Status: store.ApprovalApproved, DecidedBy: "u", Now: now})
	noErr(t, err, "approving one")

	n, err := st.ApprovalCount(ctx, &store.ApprovalCountParams{Now: now})
	noErr(t, err, "counting pending approvals")
	eq(t, n, int64(3), "pending approvals (the approved one left out)")

	n, err = st.ApprovalCount(ctx, &store.ApprovalCountParams{Now: short.ExpiresAt})
	noErr(t, err, "counting pending approvals at an expiry")
	eq(t, n, int64(3), "pending approvals at the instant one expires (expiry is exclusive of its instant)")

	n, err = st.ApprovalCount(ctx, &store.ApprovalCountParams{Now: now.Add(90 * time.Minute)})
	noErr(t, err, "counting pending approvals later")
	eq(t, n, int64(1), "pending approvals after two expired unswept")
}

func (s suite) testApprovalCountInvalid(t *testing.T) {
	st := s.newStore(t)
	_, err := st.ApprovalCount(ctxFor(t), &store.ApprovalCountParams{})
	errIs(t, err, store.ErrInvalid, "counting approvals without Now")
}
