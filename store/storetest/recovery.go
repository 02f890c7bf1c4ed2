package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// recoveryTests cover what a graceful stop, a restart and a takeover rely on:
// releasing cut-off work, reclaiming a previous run's leases, appends fenced
// by the lease, and tool execution markers.
func (s suite) recoveryTests() []namedTest {
	return []namedTest{
		{"ReleaseDoesNotCountTheAttempt", s.testWorkRelease},
		{"ReclaimOwnLeasesAtOnce", s.testWorkReclaim},
		{"ReclaimFailsTheLastAttempt", s.testWorkReclaimLastAttempt},
		{"AppendFencedByLease", s.testAppendFenced},
		{"ToolExecutionMarkers", s.testToolExecutions},
		{"ToolExecutionStartFenced", s.testToolExecutionFenced},
	}
}

func (s suite) testWorkRelease(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0})
	got := claim(t, st, "w1", 1, 30*time.Second, t0)
	deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "first claim")

	at := clk.Advance(time.Second)
	_, err := st.WorkRelease(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w2", Now: at})
	errIs(t, err, store.ErrLeaseLost, "releasing an item held by another worker")
	rel, err := st.WorkRelease(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", Now: at})
	noErr(t, err, "releasing the item by its holder")
	eq(t, rel.State, store.WorkAvailable, "state after a release")
	eq(t, rel.Attempts, 0, "attempts after releasing the first attempt (a stop is not an attempt)")
	eq(t, rel.ClaimedBy, "", "claimed by after a release")
	isTrue(t, rel.LeaseExpiresAt == nil, "a released item has no lease")
	timeEq(t, rel.RunAt, it.RunAt, "run at after a release (keeps its place in claim order)")
	conv := getConversation(t, st, c.ID)
	eq(t, conv.LeaseOwner, "", "conversation lease owner after a release")
	eq(t, conv.Status, store.ConversationIdle, "conversation status after a release")

	_, err = st.WorkRelease(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", Now: at})
	errIs(t, err, store.ErrLeaseLost, "releasing an item a second time")
	_, err = st.WorkRelease(ctx, &store.WorkLeaseParams{ID: uuid.New(), Worker: "w1", Now: at})
	errIs(t, err, store.ErrNotFound, "releasing an unknown item")

	// Another worker claims it at once, well within the first lease's TTL.
	got = claim(t, st, "w2", 1, 30*time.Second, at)
	deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "claim by another worker right after the release")
	eq(t, got[0].Attempts, 1, "attempts on the claim after a release")
}

func (s suite) testWorkReclaim(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	mine, theirs := newConversation(t, st, clk), newConversation(t, st, clk)
	a := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &mine.ID, Now: t0})
	b := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &theirs.ID, Now: t0})
	eq(t, len(claim(t, st, "host-a", 1, 30*time.Second, t0)), 1, "items claimed by host-a")
	eq(t, len(claim(t, st, "host-b", 1, 30*time.Second, t0)), 1, "items claimed by host-b")
	// host-a restarts a second later: its leases are far from expired.
	at := clk.Advance(time.Second)
	got, err := st.WorkReclaim(ctx, &store.WorkReclaimParams{Worker: "host-a", Now: at})
	noErr(t, err, "reclaiming host-a's work")
	deepEq(t, idsOf(got), []uuid.UUID{a.ID}, "items reclaimed for host-a")
	eq(t, got[0].State, store.WorkAvailable, "state of a reclaimed item")
	eq(t, got[0].Attempts, 1, "attempts of a reclaimed item (the crashed attempt counts)")
	eq(t, got[0].ClaimedBy, "", "claimed by of a reclaimed item")
	eq(t, getConversation(t, st, mine.ID).LeaseOwner, "", "lease of the reclaimed item's conversation")
	eq(t, getConversation(t, st, theirs.ID).LeaseOwner, "host-b", "another instance's lease is untouched")
	other, err := st.WorkGet(ctx, b.ID)
	noErr(t, err, "getting host-b's item")
	eq(t, other.State, store.WorkRunning, "state of another instance's item after a reclaim")

	again := claim(t, st, "host-a", 5, 30*time.Second, at)
	deepEq(t, idsOf(again), []uuid.UUID{a.ID}, "claim right after the reclaim, without waiting out the lease")
	eq(t, again[0].Attempts, 2, "attempts on the claim after a reclaim")

	none, err := st.WorkReclaim(ctx, &store.WorkReclaimParams{Worker: "host-c", Now: at})
	noErr(t, err, "reclaiming for an instance that holds nothing")
	eq(t, len(none), 0, "items reclaimed for an instance that holds nothing")
	_, err = st.WorkReclaim(ctx, &store.WorkReclaimParams{Now: at})
	errIs(t, err, store.ErrInvalid, "reclaiming without a worker")
}

func (s suite) testWorkReclaimLastAttempt(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, MaxAttempts: 1, Now: clk.Now()})
	claim(t, st, "host-a", 1, 30*time.Second, clk.Now())
	got, err := st.WorkReclaim(ctx, &store.WorkReclaimParams{Worker: "host-a", Now: clk.Advance(time.Second)})
	noErr(t, err, "reclaiming an item on its last attempt")
	deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "items reclaimed")
	eq(t, got[0].State, store.WorkFailed, "state of an item reclaimed on its last attempt")
	isTrue(t, got[0].FinishedAt != nil, "a failed item is finished")
	eq(t, getConversation(t, st, c.ID).LeaseOwner, "", "conversation lease after the reclaim")
	eq(t, len(claim(t, st, "host-a", 1, 30*time.Second, clk.Now())), 0, "an item failed by a reclaim is never claimed again")
}

func (s suite) testAppendFenced(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	appendN(t, st, clk, c.ID, 1)
	enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0})
	claim(t, st, "w1", 1, 30*time.Second, t0)

	fenced := func(owner string, kind store.EntryKind, now time.Time, expect *int64) error {
		_, err := st.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: c.ID, Kind: kind, Author: "agent:a", Content: content("by %s", owner),
			ExpectSeq: expect, LeaseOwner: owner, Now: now,
		})
		return err
	}
	noErr(t, fenced("w1", store.EntryAssistant, t0.Add(time.Second), nil), "append by the lease holder")
	noErr(t, fenced("w1", store.EntryError, t0.Add(time.Second), nil), "error entry by the lease holder")
	noErr(t, fenced("w1", store.EntryAssistant, t0.Add(time.Second), ptr(int64(3))), "append at the expected next seq by the lease holder")
	errIs(t, fenced("w2", store.EntryAssistant, t0.Add(time.Second), nil), store.ErrLeaseLost, "append by a worker that does not hold the lease")
	errIs(t, fenced("w2", store.EntryError, t0.Add(time.Second), nil), store.ErrLeaseLost, "error entry by a worker that does not hold the lease")
	errIs(t, fenced("w2", store.EntryAssistant, t0.Add(time.Second), ptr(int64(2))), store.ErrLeaseLost, "forking append by a worker that does not hold the lease")

	// The lease expires and w2 takes the item over: w1 may no longer write,
	// neither before nor after the takeover.
	late := t0.Add(31 * time.Second)
	errIs(t, fenced("w1", store.EntryAssistant, late, nil), store.ErrLeaseLost, "append by the holder of an expired lease")
	claim(t, st, "w2", 1, 30*time.Second, late)
	errIs(t, fenced("w1", store.EntryToolResult, late, nil), store.ErrLeaseLost, "append by the worker whose lease was taken over")
	errIs(t, fenced("w1", store.EntryError, late, nil), store.ErrLeaseLost, "error entry by the worker whose lease was taken over")
	noErr(t, fenced("w2", store.EntryAssistant, late, nil), "append by the new holder")

	es := listEntries(t, st, store.EntryListParams{ConversationID: c.ID})
	deepEq(t, seqsOf(es), wantSeqs(1, 4), "the log after the refused appends (nothing of theirs landed)")
	withErrors := listEntries(t, st, store.EntryListParams{ConversationID: c.ID, WithErrors: true})
	eq(t, len(withErrors), 5, "entries with errors after the refused appends (one error entry, by the holder)")
	eq(t, len(getForks(t, st, c.ID)), 0, "forks after a refused forking append")

	// Unfenced appends (a person's message) never look at the lease.
	_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Author: "user:u1", Content: content("hi"), Now: late})
	noErr(t, err, "unfenced append while another worker holds the lease")
	errIs(t, func() error {
		_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: uuid.New(), Kind: store.EntryUser, Author: "user:u1", Content: content("hi"), LeaseOwner: "w2", Now: late})
		return err
	}(), store.ErrNotFound, "fenced append to an unknown conversation")
}

func getForks(t testing.TB, st store.Queries, id uuid.UUID) []*store.Conversation {
	t.Helper()
	forks, err := st.ConversationForks(ctxFor(t), id)
	noErr(t, err, "listing forks of %s", id)
	return forks
}

func (s suite) testToolExecutions(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)

	_, err := st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "call_1", Now: t0})
	errIs(t, err, store.ErrNotFound, "finishing a call never started")
	res, err := st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, CallID: "call_1", Now: t0})
	noErr(t, err, "starting call_1")
	isTrue(t, res.Started, "the first start of a call starts it")
	eq(t, res.Execution.State, store.ToolExecuting, "state of a started call")
	timeEq(t, res.Execution.StartedAt, t0, "started at")
	isTrue(t, res.Execution.FinishedAt == nil, "a started call is not finished")

	again, err := st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, CallID: "call_1", Now: clk.Advance(time.Second)})
	noErr(t, err, "starting call_1 again")
	isTrue(t, !again.Started, "a second start of a call must not start it again")
	eq(t, again.Execution.State, store.ToolExecuting, "state seen by the second start")
	timeEq(t, again.Execution.StartedAt, t0, "started at seen by the second start (the first run's)")

	done := clk.Advance(time.Second)
	fin, err := st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "call_1", Now: done})
	noErr(t, err, "finishing call_1")
	eq(t, fin.State, store.ToolFinished, "state after finishing")
	timePtrEq(t, fin.FinishedAt, done, "finished at")
	fin, err = st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "call_1", Now: clk.Advance(time.Second)})
	noErr(t, err, "finishing call_1 a second time")
	timePtrEq(t, fin.FinishedAt, done, "finished at after a second finish (the first is kept)")
	eq(t, fin.State, store.ToolFinished, "state after a second finish")

	after, err := st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, CallID: "call_1", Now: clk.Now()})
	noErr(t, err, "starting a finished call")
	isTrue(t, !after.Started, "a finished call must not start again")

	got, err := st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: c.ID, CallID: "call_1"})
	noErr(t, err, "reading call_1's marker")
	eq(t, got.State, store.ToolFinished, "state read back")
	timePtrEq(t, got.FinishedAt, done, "finished at read back")
	_, err = st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: c.ID, CallID: "never"})
	errIs(t, err, store.ErrNotFound, "reading the marker of a call never started")
	_, err = st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: c.ID})
	errIs(t, err, store.ErrInvalid, "reading a marker without a call id")

	// A call cut off while it ran ends as interrupted when a later attempt
	// records it so; that end is kept like any first end.
	_, err = st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, CallID: "call_2", Now: clk.Now()})
	noErr(t, err, "starting call_2")
	got, err = st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: c.ID, CallID: "call_2"})
	noErr(t, err, "reading call_2's marker while it runs")
	eq(t, got.State, store.ToolExecuting, "state of a running call read back")
	cut := clk.Advance(time.Second)
	intr, err := st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "call_2", State: store.ToolInterrupted, Now: cut})
	noErr(t, err, "ending call_2 as interrupted")
	eq(t, intr.State, store.ToolInterrupted, "state of an interrupted call")
	timePtrEq(t, intr.FinishedAt, cut, "end time of an interrupted call")
	intr, err = st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "call_2", Now: clk.Advance(time.Second)})
	noErr(t, err, "finishing an interrupted call")
	eq(t, intr.State, store.ToolInterrupted, "state after a finish of an interrupted call (the first end is kept)")
	timePtrEq(t, intr.FinishedAt, cut, "end time after a second end")
	got, err = st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: c.ID, CallID: "call_2"})
	noErr(t, err, "reading call_2's marker")
	eq(t, got.State, store.ToolInterrupted, "state of an interrupted call read back")
	_, err = st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "call_2", State: store.ToolExecuting, Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "ending a call as executing")

	// Call ids are per conversation.
	other := newConversation(t, st, clk)
	res, err = st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: other.ID, CallID: "call_1", Now: clk.Now()})
	noErr(t, err, "starting call_1 in another conversation")
	isTrue(t, res.Started, "the same call id in another conversation is another call")

	_, err = st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "never", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "finishing a call never started")
	_, err = st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "starting a call without a call id")
	_, err = st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: uuid.New(), CallID: "x", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "starting a call in an unknown conversation")
}

func (s suite) testToolExecutionFenced(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0})
	claim(t, st, "w1", 1, 30*time.Second, t0)

	_, err := st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, CallID: "a", LeaseOwner: "w2", Now: t0})
	errIs(t, err, store.ErrLeaseLost, "starting a call fenced by a worker without the lease")
	_, err = st.ToolExecutionFinish(ctx, &store.ToolExecutionFinishParams{ConversationID: c.ID, CallID: "a", Now: t0})
	errIs(t, err, store.ErrNotFound, "the marker of a refused start")
	res, err := st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, CallID: "a", LeaseOwner: "w1", Now: t0})
	noErr(t, err, "starting a call fenced by the lease holder")
	isTrue(t, res.Started, "the holder's fenced start starts the call")
	_, err = st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: c.ID, CallID: "b", LeaseOwner: "w1", Now: t0.Add(31 * time.Second)})
	errIs(t, err, store.ErrLeaseLost, "starting a call under an expired lease")
}
