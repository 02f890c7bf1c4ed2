package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// ---- inbound dedupe ----

func (s suite) inboundTests() []namedTest {
	return []namedTest{
		{"Dedupe", s.testInboundDedupe},
		{"DedupeConcurrent", s.testInboundConcurrent},
	}
}

func (s suite) testInboundDedupe(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	cases := []struct {
		platform, event string
		want            bool
		why             string
	}{
		{"slack", "Ev01", true, "first sight of an event"},
		{"slack", "Ev01", false, "the same event again (a platform retry)"},
		{"discord", "Ev01", true, "the same id on another platform"},
		{"slack", "Ev02", true, "another event"},
		{"discord", "Ev01", false, "the other platform's event again"},
	}
	for _, tc := range cases {
		got, err := st.InboundRecord(ctx, &store.InboundRecordParams{Platform: tc.platform, EventID: tc.event, Now: clk.Now()})
		noErr(t, err, "recording %s/%s", tc.platform, tc.event)
		eq(t, got, tc.want, "InboundRecord(%s, %s): %s", tc.platform, tc.event, tc.why)
	}
}

func (s suite) testInboundConcurrent(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	const callers = 16
	var (
		firsts int
		mu     sync.Mutex
		wg     sync.WaitGroup
		start  = make(chan struct{})
		errs   = make(chan error, callers)
	)
	for range callers {
		wg.Go(func() {
			<-start
			first, err := st.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: "EvRace", Now: clk.Now()})
			if err != nil {
				errs <- err
				return
			}
			if first {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("recording a duplicate event concurrently: %v", err)
	}
	eq(t, firsts, 1, "callers told they saw the event first, of %d racing with one event id", callers)
}

// ---- notifications ----

func (s suite) notificationTests() []namedTest {
	return []namedTest{
		{"WorkWakeup", s.testNotifyWork},
		{"NoneOnRollback", s.testNotifyRollback},
		{"AfterCommit", s.testNotifyAfterCommit},
		{"Entries", s.testNotifyEntries},
	}
}

// waitLong bounds waits for a notification that must arrive; it only costs
// time when the driver is broken.
const waitLong = 10 * time.Second

// absenceWindow is how long a test waits to be confident a notification that
// must not come does not come.
const absenceWindow = 200 * time.Millisecond

// awaitPayload reads ch until a notification for topic with payload arrives,
// or d passes. It returns whether it arrived and the payloads seen before it.
// Payloads are unique per test (a fresh kind or conversation id), because on
// Postgres every store of a database may share one channel.
func awaitPayload(ch <-chan store.Notification, topic, payload string, d time.Duration) (bool, []string) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case n, ok := <-ch:
			if !ok {
				return false, seen
			}
			if n.Topic == topic && n.Payload == payload {
				return true, seen
			}
			seen = append(seen, n.Topic+":"+n.Payload)
		case <-timer.C:
			return false, seen
		}
	}
}

func subscribe(t *testing.T, st store.Store, topic string) <-chan store.Notification {
	t.Helper()
	ctx, cancel := context.WithCancel(ctxFor(t))
	t.Cleanup(cancel)
	ch, err := st.Subscribe(ctx, topic)
	noErr(t, err, "subscribing to %s", topic)
	return ch
}

func uniqueKind(prefix string) string {
	return prefix + "-" + uuid.NewString()[:8]
}

func (s suite) testNotifyWork(t *testing.T) {
	st := s.newStore(t)
	clk := newClock()
	ch := subscribe(t, st, store.TopicWork)

	kind := uniqueKind("wake")
	enqueue(t, st, store.WorkEnqueueParams{Kind: kind, Now: clk.Now()})
	ok, seen := awaitPayload(ch, store.TopicWork, kind, waitLong)
	isTrue(t, ok, "a %s notification with payload %q (the work kind) within %s of the enqueue; saw %v", store.TopicWork, kind, waitLong, seen)
}

func (s suite) testNotifyRollback(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	ch := subscribe(t, st, store.TopicWork)

	rolledBack := uniqueKind("rolled-back")
	errAbort := errors.New("abort")
	err := st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: rolledBack, Now: clk.Now()}); err != nil {
			return err
		}
		return errAbort
	})
	errIs(t, err, errAbort, "a transaction that enqueues and then fails")

	// A committed enqueue after it acts as a marker: everything sent for the
	// rolled-back transaction would arrive before it.
	committed := uniqueKind("committed")
	enqueue(t, st, store.WorkEnqueueParams{Kind: committed, Now: clk.Now()})
	ok, seen := awaitPayload(ch, store.TopicWork, committed, waitLong)
	isTrue(t, ok, "the committed enqueue's notification within %s; saw %v", waitLong, seen)
	isTrue(t, !slices.Contains(seen, store.TopicWork+":"+rolledBack), "a notification for work enqueued in a rolled-back transaction arrived: %v", seen)
	ok, _ = awaitPayload(ch, store.TopicWork, rolledBack, absenceWindow)
	isTrue(t, !ok, "a notification for work enqueued in a rolled-back transaction arrived")
}

func (s suite) testNotifyAfterCommit(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	ch := subscribe(t, st, store.TopicWork)

	kind := uniqueKind("outbox")
	var early bool
	err := st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind, Now: clk.Now()}); err != nil {
			return err
		}
		// A worker woken now would find nothing: the row is not committed.
		early, _ = awaitPayload(ch, store.TopicWork, kind, absenceWindow)
		return nil
	})
	noErr(t, err, "committing an enqueue")
	isTrue(t, !early, "the notification for an enqueue arrived before its transaction committed")
	ok, seen := awaitPayload(ch, store.TopicWork, kind, waitLong)
	isTrue(t, ok, "the notification within %s of the commit; saw %v", waitLong, seen)
}

func (s suite) testNotifyEntries(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	work := subscribe(t, st, store.TopicWork)
	entries := subscribe(t, st, store.TopicEntries)
	c := newConversation(t, st, clk)

	_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryAssistant, Content: content("hi"), Now: clk.Now()})
	noErr(t, err, "appending an entry")
	ok, seen := awaitPayload(entries, store.TopicEntries, c.ID.String(), waitLong)
	isTrue(t, ok, "a %s notification with the conversation id %s within %s of an append; saw %v", store.TopicEntries, c.ID, waitLong, seen)

	// Topics stay apart: the work subscriber hears nothing about entries.
	select {
	case n := <-work:
		isTrue(t, n.Topic == store.TopicWork, "a %s subscription delivered a %s notification", store.TopicWork, n.Topic)
		isTrue(t, n.Payload != c.ID.String(), "the %s subscription got the entries notification %v", store.TopicWork, n)
	default:
	}
}

// ---- bindings ----

func (s suite) bindingTests() []namedTest {
	return []namedTest{
		{"EnsureFind", s.testBindingEnsure},
		{"EnsureConcurrent", s.testBindingEnsureConcurrent},
		{"Advance", s.testBindingAdvance},
		{"Move", s.testBindingMove},
		{"Relocate", s.testBindingRelocate},
		{"Posted", s.testPosted},
		{"LiveStream", s.testLiveStream},
	}
}

func ensureParams(clk *clock, channel, thread string) *store.BindingEnsureParams {
	return &store.BindingEnsureParams{
		Place:        store.Place{Platform: "slack", Workspace: "T1", Channel: channel, Thread: thread},
		Conversation: store.ConversationCreateParams{Title: "thread " + thread, Provider: "scripted", Now: clk.Now()},
		Now:          clk.Now(),
	}
}

func (s suite) testBindingEnsure(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()

	first, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", "171.1"))
	noErr(t, err, "ensuring a new binding")
	isTrue(t, first.Created, "the first ensure of a place must create its binding")
	b := first.Binding
	eq(t, b.Place, store.Place{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "171.1"}, "place")
	eq(t, b.DeliveredSeq, int64(0), "delivered seq of a new binding")
	timeEq(t, b.CreatedAt, clk.Now(), "created at")
	conv := getConversation(t, st, b.ConversationID)
	eq(t, conv.Title, "thread 171.1", "title of the conversation created with the binding")

	again, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", "171.1"))
	noErr(t, err, "ensuring an existing binding")
	isTrue(t, !again.Created, "a second ensure of the same place must not create")
	eq(t, again.Binding.ID, b.ID, "binding returned by the second ensure")
	eq(t, again.Binding.ConversationID, b.ConversationID, "conversation of the binding returned by the second ensure")

	// The channel itself (no thread) is a different place.
	top, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", ""))
	noErr(t, err, "ensuring the channel-level binding")
	isTrue(t, top.Created && top.Binding.ID != b.ID, "the channel without a thread is a place of its own")
	isTrue(t, top.Binding.ConversationID != b.ConversationID, "a new place gets a new conversation")

	found, err := st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", "T1", "C1", "171.1")})
	noErr(t, err, "finding a binding by its place")
	eq(t, found.ID, b.ID, "binding found")
	found, err = st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", "T1", "C1", "")})
	noErr(t, err, "finding the channel-level binding")
	eq(t, found.ID, top.Binding.ID, "channel-level binding found")
	_, err = st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("discord", "T1", "C1", "171.1")})
	errIs(t, err, store.ErrNotFound, "finding a binding on another platform")
	_, err = st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", "T1", "C1", "999.9")})
	errIs(t, err, store.ErrNotFound, "finding a binding of an unknown thread")

	list, err := st.BindingListByConversation(ctx, b.ConversationID)
	noErr(t, err, "listing a conversation's bindings")
	eq(t, len(list), 1, "bindings of the conversation")
	eq(t, list[0].ID, b.ID, "the conversation's binding")
	list, err = st.BindingListByConversation(ctx, uuid.New())
	noErr(t, err, "listing bindings of an unknown conversation")
	eq(t, len(list), 0, "bindings of an unknown conversation")
}

func (s suite) testBindingEnsureConcurrent(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	const callers = 10
	var (
		mu      sync.Mutex
		results []*store.BindingEnsureResult
		wg      sync.WaitGroup
		start   = make(chan struct{})
		errs    = make(chan error, callers)
	)
	for range callers {
		wg.Go(func() {
			<-start
			r, err := st.BindingEnsure(ctx, ensureParams(clk, "C9", "race"))
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("ensuring one place concurrently: %v", err)
	}
	if t.Failed() {
		t.FailNow()
	}
	created := 0
	for _, r := range results {
		if r.Created {
			created++
		}
		eq(t, r.Binding.ID, results[0].Binding.ID, "binding returned to racing callers (all the same)")
		eq(t, r.Binding.ConversationID, results[0].Binding.ConversationID, "conversation returned to racing callers (all the same)")
	}
	eq(t, created, 1, "callers told they created the binding, of %d racing", callers)
}

func (s suite) testBindingAdvance(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	r, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", "1.1"))
	noErr(t, err, "ensuring a binding")

	steps := []struct{ to, want int64 }{{5, 5}, {3, 5}, {5, 5}, {7, 7}, {0, 7}}
	for _, step := range steps {
		b, err := st.BindingAdvance(ctx, &store.BindingAdvanceParams{ID: r.Binding.ID, DeliveredSeq: step.to, Now: clk.Advance(time.Second)})
		noErr(t, err, "advancing the delivered cursor to %d", step.to)
		eq(t, b.DeliveredSeq, step.want, "delivered seq after advancing to %d (never goes back)", step.to)
	}
	found, err := st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", "T1", "C1", "1.1")})
	noErr(t, err, "finding the advanced binding")
	eq(t, found.DeliveredSeq, int64(7), "delivered seq read back")

	_, err = st.BindingAdvance(ctx, &store.BindingAdvanceParams{ID: uuid.New(), DeliveredSeq: 1, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "advancing an unknown binding")
}

func (s suite) testPosted(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	r, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", "1.1"))
	noErr(t, err, "ensuring a binding")
	es := appendN(t, st, clk, r.Binding.ConversationID, 2)

	_, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es[0].ID})
	errIs(t, err, store.ErrNotFound, "getting what an entry became before it was posted")

	noErr(t, st.PostedRecord(ctx, &store.Posted{BindingID: r.Binding.ID, EntryID: es[0].ID, MessageIDs: []string{"171.2", "171.3"}, CreatedAt: clk.Now()}), "recording a posted entry")
	p, err := st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es[0].ID})
	noErr(t, err, "getting a posted entry")
	deepEq(t, p.MessageIDs, []string{"171.2", "171.3"}, "message ids of a posted entry (in order)")

	noErr(t, st.PostedRecord(ctx, &store.Posted{BindingID: r.Binding.ID, EntryID: es[0].ID, MessageIDs: []string{"171.9"}, CreatedAt: clk.Now()}), "recording the same entry again")
	p, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es[0].ID})
	noErr(t, err, "getting a re-recorded entry")
	deepEq(t, p.MessageIDs, []string{"171.9"}, "message ids after recording the same entry again (replaced)")

	_, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es[1].ID})
	errIs(t, err, store.ErrNotFound, "getting another entry that was never posted")

	// A post intent is pending until the message ids are recorded.
	noErr(t, st.PostedRecord(ctx, &store.Posted{BindingID: r.Binding.ID, EntryID: es[1].ID, Pending: true, CreatedAt: clk.Now()}), "recording a post intent")
	p, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es[1].ID})
	noErr(t, err, "getting a post intent")
	isTrue(t, p.Pending, "a post intent must read back as pending")
	eq(t, len(p.MessageIDs), 0, "message ids of a post intent")
	noErr(t, st.PostedRecord(ctx, &store.Posted{BindingID: r.Binding.ID, EntryID: es[1].ID, MessageIDs: []string{"C1/171.4"}, CreatedAt: clk.Now()}), "completing a post intent")
	p, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es[1].ID})
	noErr(t, err, "getting a completed post intent")
	isTrue(t, !p.Pending, "a completed post intent must not be pending")
	deepEq(t, p.MessageIDs, []string{"C1/171.4"}, "message ids of a completed post intent")
	eq(t, p.Undeliverable, "", "reason of an entry delivered as itself")

	// An entry the platform refused for good: the reason holds while its
	// notice is posted and after, on every store.
	es2 := appendN(t, st, clk, r.Binding.ConversationID, 1)
	const why = "the app lacks the files:write scope"
	noErr(t, st.PostedRecord(ctx, &store.Posted{BindingID: r.Binding.ID, EntryID: es2[0].ID, Pending: true, Undeliverable: why, CreatedAt: clk.Now()}), "recording an undeliverable entry's notice intent")
	p, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es2[0].ID})
	noErr(t, err, "getting an undeliverable entry's notice intent")
	isTrue(t, p.Pending, "a notice intent must read back as pending")
	eq(t, p.Undeliverable, why, "reason of an undeliverable entry (notice pending)")
	noErr(t, st.PostedRecord(ctx, &store.Posted{BindingID: r.Binding.ID, EntryID: es2[0].ID, MessageIDs: []string{"C1/171.5"}, Undeliverable: why, CreatedAt: clk.Now()}), "recording an undeliverable entry's notice")
	p, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: r.Binding.ID, EntryID: es2[0].ID})
	noErr(t, err, "getting an undeliverable entry")
	isTrue(t, !p.Pending, "an undeliverable entry whose notice is posted must not be pending")
	eq(t, p.Undeliverable, why, "reason of an undeliverable entry")
	deepEq(t, p.MessageIDs, []string{"C1/171.5"}, "message ids of an undeliverable entry (its notice)")
}

func (s suite) testLiveStream(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	r, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", "1.1"))
	noErr(t, err, "ensuring a binding")
	b := r.Binding.ID

	_, err = st.LiveStreamGet(ctx, b)
	errIs(t, err, store.ErrNotFound, "getting a live stream that was never recorded")
	noErr(t, st.LiveStreamDelete(ctx, b), "forgetting a live stream that was never recorded")

	turn := uuid.New()
	noErr(t, st.LiveStreamSave(ctx, &store.LiveStream{BindingID: b, TurnID: &turn, MessageIDs: []string{"C1/1.2"}, UpdatedAt: clk.Now()}), "recording a live stream")
	l, err := st.LiveStreamGet(ctx, b)
	noErr(t, err, "getting a live stream")
	deepEq(t, l.MessageIDs, []string{"C1/1.2"}, "message ids of a live stream")
	isTrue(t, l.TurnID != nil && *l.TurnID == turn, "turn id of a live stream")
	timeEq(t, l.UpdatedAt, clk.Now(), "updated at of a live stream")

	clk.Advance(time.Second)
	noErr(t, st.LiveStreamSave(ctx, &store.LiveStream{BindingID: b, MessageIDs: []string{"C1/1.2", "C1/1.3"}, UpdatedAt: clk.Now()}), "recording a grown live stream")
	l, err = st.LiveStreamGet(ctx, b)
	noErr(t, err, "getting a grown live stream")
	deepEq(t, l.MessageIDs, []string{"C1/1.2", "C1/1.3"}, "message ids of a grown live stream (replaced, in order)")
	isTrue(t, l.TurnID == nil, "a live stream saved without a turn has none")

	noErr(t, st.LiveStreamDelete(ctx, b), "forgetting a live stream")
	_, err = st.LiveStreamGet(ctx, b)
	errIs(t, err, store.ErrNotFound, "getting a forgotten live stream")
}

// ---- approvals ----

func (s suite) approvalTests() []namedTest {
	return []namedTest{
		{"CreateDecide", s.testApprovalDecide},
		{"DecideAfterExpiry", s.testApprovalDecideExpired},
		{"Expire", s.testApprovalExpire},
		{"ListVisible", s.testApprovalListVisible},
	}
}

func createApproval(t testing.TB, st store.Queries, convID uuid.UUID, callID string, now, expires time.Time) *store.Approval {
	t.Helper()
	a, err := st.ApprovalCreate(ctxFor(t), &store.ApprovalCreateParams{
		ConversationID: convID,
		CallID:         callID,
		Tool:           "send_email",
		Kind:           store.ApprovalConfirm,
		Risk:           "high",
		Request:        json.RawMessage(`{"to": "ceo@example.com", "subject": "hi"}`),
		Deciders:       []string{"user:U1", "user:U2"},
		ExpiresAt:      expires,
		Now:            now,
	})
	noErr(t, err, "creating approval for %s", callID)
	return a
}

func (s suite) testApprovalDecide(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	a := createApproval(t, st, c.ID, "call_1", t0, t0.Add(time.Hour))

	got, err := st.ApprovalGet(ctx, a.ID)
	noErr(t, err, "getting an approval")
	for _, x := range []*store.Approval{a, got} {
		eq(t, x.ConversationID, c.ID, "approval conversation")
		eq(t, x.CallID, "call_1", "call id")
		eq(t, x.Tool, "send_email", "tool")
		eq(t, x.Kind, store.ApprovalConfirm, "kind")
		eq(t, x.Risk, "high", "risk")
		jsonEq(t, x.Request, json.RawMessage(`{"to": "ceo@example.com", "subject": "hi"}`), "request")
		deepEq(t, x.Deciders, []string{"user:U1", "user:U2"}, "deciders")
		eq(t, x.Status, store.ApprovalPending, "status of a new approval")
		timeEq(t, x.ExpiresAt, t0.Add(time.Hour), "expires at")
		isTrue(t, x.DecidedAt == nil, "a new approval is undecided")
		timeEq(t, x.CreatedAt, t0, "created at")
	}

	byCall, err := st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: c.ID, CallID: "call_1"})
	noErr(t, err, "finding an approval by its call")
	eq(t, byCall.ID, a.ID, "approval found by call")
	_, err = st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: c.ID, CallID: "call_unknown"})
	errIs(t, err, store.ErrNotFound, "finding an approval for an unknown call")
	second := createApproval(t, st, c.ID, "call_9", t0, t0.Add(time.Hour))
	pending, err := st.ApprovalListPending(ctx, c.ID)
	noErr(t, err, "listing pending approvals")
	eq(t, len(pending), 2, "pending approvals of the conversation")
	other := newConversation(t, st, clk)
	none, err := st.ApprovalListPending(ctx, other.ID)
	noErr(t, err, "listing pending approvals of another conversation")
	eq(t, len(none), 0, "pending approvals of a conversation with none")
	_, err = st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: second.ID, Status: store.ApprovalDenied, DecidedBy: "user:U1", Now: t0})
	noErr(t, err, "deciding the second approval")
	pending, err = st.ApprovalListPending(ctx, c.ID)
	noErr(t, err, "listing pending approvals after a decision")
	eq(t, len(pending), 1, "pending approvals after one was decided")
	eq(t, pending[0].ID, a.ID, "the approval still pending")
	_, err = st.ApprovalGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "getting an unknown approval")

	at := t0.Add(10 * time.Minute)
	d, err := st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: a.ID, Status: store.ApprovalApproved, Decision: json.RawMessage(`{"ok": true}`), DecidedBy: "user:U2", Now: at})
	noErr(t, err, "approving a pending approval")
	eq(t, d.Status, store.ApprovalApproved, "status after approving")
	eq(t, d.DecidedBy, "user:U2", "decided by")
	jsonEq(t, d.Decision, json.RawMessage(`{"ok": true}`), "decision")
	timePtrEq(t, d.DecidedAt, at, "decided at")

	_, err = st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: a.ID, Status: store.ApprovalDenied, DecidedBy: "user:U1", Now: at.Add(time.Second)})
	errIs(t, err, store.ErrConflict, "deciding an approval a second time")
	got, err = st.ApprovalGet(ctx, a.ID)
	noErr(t, err, "getting the decided approval")
	eq(t, got.Status, store.ApprovalApproved, "status after a refused second decision (the first stands)")
	eq(t, got.DecidedBy, "user:U2", "decided by after a refused second decision")

	// Deny is a decision too.
	b := createApproval(t, st, c.ID, "call_2", t0, t0.Add(time.Hour))
	d, err = st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: b.ID, Status: store.ApprovalDenied, DecidedBy: "user:U1", Now: at})
	noErr(t, err, "denying a pending approval")
	eq(t, d.Status, store.ApprovalDenied, "status after denying")

	_, err = st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: uuid.New(), Status: store.ApprovalApproved, Now: at})
	isTrue(t, errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict), "deciding an unknown approval must fail with ErrNotFound or ErrConflict, got %v", err)
}

func (s suite) testApprovalDecideExpired(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	a := createApproval(t, st, c.ID, "call_1", t0, t0.Add(time.Minute))

	// Not yet swept to expired, but past its expiry: the decision is too late.
	_, err := st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: a.ID, Status: store.ApprovalApproved, DecidedBy: "user:U1", Now: t0.Add(2 * time.Minute)})
	errIs(t, err, store.ErrConflict, "deciding an approval after it expired")
	got, err := st.ApprovalGet(ctx, a.ID)
	noErr(t, err, "getting the approval after a late decision")
	isTrue(t, got.Status == store.ApprovalPending || got.Status == store.ApprovalExpired, "a late decision must not approve, got status %s", got.Status)
}

func (s suite) testApprovalExpire(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	short := createApproval(t, st, c.ID, "call_short", t0, t0.Add(time.Minute))
	long := createApproval(t, st, c.ID, "call_long", t0, t0.Add(time.Hour))
	decided := createApproval(t, st, c.ID, "call_decided", t0, t0.Add(time.Minute))
	_, err := st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: decided.ID, Status: store.ApprovalApproved, DecidedBy: "user:U1", Now: t0.Add(time.Second)})
	noErr(t, err, "deciding one approval")

	expired, err := st.ApprovalExpire(ctx, &store.ApprovalExpireParams{Now: t0.Add(30 * time.Second), Limit: 10})
	noErr(t, err, "expiring before anything expired")
	eq(t, len(expired), 0, "approvals expired before any expiry passed")

	expired, err = st.ApprovalExpire(ctx, &store.ApprovalExpireParams{Now: t0.Add(2 * time.Minute), Limit: 10})
	noErr(t, err, "expiring approvals")
	eq(t, len(expired), 1, "approvals expired (only the pending one past its expiry; not the decided one, not the long one)")
	eq(t, expired[0].ID, short.ID, "the expired approval")
	eq(t, expired[0].Status, store.ApprovalExpired, "status of the approval returned by expire")

	for _, tc := range []struct {
		a    *store.Approval
		want store.ApprovalStatus
	}{{short, store.ApprovalExpired}, {long, store.ApprovalPending}, {decided, store.ApprovalApproved}} {
		got, err := st.ApprovalGet(ctx, tc.a.ID)
		noErr(t, err, "getting approval %s", tc.a.CallID)
		eq(t, got.Status, tc.want, "status of %s after the sweep", tc.a.CallID)
	}

	expired, err = st.ApprovalExpire(ctx, &store.ApprovalExpireParams{Now: t0.Add(3 * time.Minute), Limit: 10})
	noErr(t, err, "expiring again")
	eq(t, len(expired), 0, "approvals expired by a second sweep (already expired ones are not returned again)")
	_, err = st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: short.ID, Status: store.ApprovalApproved, DecidedBy: "user:U1", Now: t0.Add(3 * time.Minute)})
	errIs(t, err, store.ErrConflict, "deciding an expired approval")
}

// ---- agents, usage ----

func (s suite) recordTests() []namedTest {
	return []namedTest{
		{"Agents", s.testAgents},
		{"Usage", s.testUsage},
	}
}

func (s suite) testAgents(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()

	a, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "helper", Config: json.RawMessage(`{"model": "m1"}`), Now: t0})
	noErr(t, err, "upserting a new agent")
	isTrue(t, a.ID != uuid.Nil, "a new agent must get an id")
	timeEq(t, a.CreatedAt, t0, "agent created at")

	t1 := clk.Advance(time.Hour)
	b, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "helper", Config: json.RawMessage(`{"model": "m2", "tools": ["search"]}`), Now: t1})
	noErr(t, err, "upserting an existing agent")
	eq(t, b.ID, a.ID, "id after upserting the same name (the same agent)")
	jsonEq(t, b.Config, json.RawMessage(`{"model": "m2", "tools": ["search"]}`), "config after the upsert")
	timeEq(t, b.CreatedAt, t0, "created at after an update (unchanged)")
	timeEq(t, b.UpdatedAt, t1, "updated at after an update")

	got, err := st.AgentGetByName(ctx, "helper")
	noErr(t, err, "getting an agent by name")
	eq(t, got.ID, a.ID, "agent by name")
	jsonEq(t, got.Config, json.RawMessage(`{"model": "m2", "tools": ["search"]}`), "config read back")
	_, err = st.AgentGetByName(ctx, "nobody")
	errIs(t, err, store.ErrNotFound, "getting an unknown agent")

	_, err = st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "scout", Config: json.RawMessage(`{}`), Now: t1})
	noErr(t, err, "upserting a second agent")
	scout, err := st.AgentGetByName(ctx, "scout")
	noErr(t, err, "getting the second agent")
	isTrue(t, scout.ID != a.ID, "two agents have two ids")
}

func (s suite) testUsage(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	other := newConversation(t, st, clk)
	turn := uuid.New()

	u := &store.Usage{ID: uuid.New(), ConversationID: c.ID, TurnID: &turn, Provider: "anthropic", Model: "claude-sonnet-4-5",
		InputTokens: 1200, OutputTokens: 340, CachedTokens: 1000, CacheWriteTokens: 700, ReasoningTokens: 55, CostMicroUSD: 8125, CreatedAt: clk.Now()}
	noErr(t, st.UsageRecord(ctx, u), "recording usage")
	noErr(t, st.UsageRecord(ctx, &store.Usage{ID: uuid.New(), ConversationID: other.ID, Provider: "openai", Model: "gpt", InputTokens: 1, CreatedAt: clk.Now()}), "recording another conversation's usage")

	got, err := st.UsageList(ctx, c.ID)
	noErr(t, err, "listing usage")
	eq(t, len(got), 1, "usage rows of the conversation")
	g := got[0]
	eq(t, g.ID, u.ID, "usage id")
	uuidPtrEq(t, g.TurnID, turn, "usage turn")
	isTrue(t, g.AgentID == nil, "usage agent recorded without one, got %v", g.AgentID)
	eq(t, fmt.Sprint(g.Provider, "/", g.Model), "anthropic/claude-sonnet-4-5", "usage provider/model")
	deepEq(t, []int64{g.InputTokens, g.OutputTokens, g.CachedTokens, g.CacheWriteTokens, g.ReasoningTokens, g.CostMicroUSD}, []int64{1200, 340, 1000, 700, 55, 8125}, "usage tokens (input, output, cached, cache-write, reasoning) and cost")
	timeEq(t, g.CreatedAt, clk.Now(), "usage created at")
}

// ---- named leases ----

func (s suite) namedLeaseTests() []namedTest {
	return []namedTest{{"AcquireRenewRelease", s.testNamedLease}}
}

func (s suite) testNamedLease(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	const ttl = 30 * time.Second
	acquire := func(name, owner string, at time.Duration) bool {
		t.Helper()
		ok, err := st.LeaseAcquire(ctx, &store.NamedLeaseParams{Name: name, Owner: owner, TTL: ttl, Now: t0.Add(at)})
		noErr(t, err, "acquiring lease %s as %s at +%s", name, owner, at)
		return ok
	}
	release := func(name, owner string, at time.Duration) {
		t.Helper()
		noErr(t, st.LeaseRelease(ctx, &store.NamedLeaseParams{Name: name, Owner: owner, Now: t0.Add(at)}), "releasing lease %s as %s", name, owner)
	}

	steps := []struct {
		do    string // "acquire" or "release"
		name  string
		owner string
		at    time.Duration
		want  bool
		why   string
	}{
		{"acquire", "scheduler", "a", 0, true, "a free lease"},
		{"acquire", "scheduler", "a", 20 * time.Second, true, "renewal by the holder"},
		{"acquire", "scheduler", "b", 40 * time.Second, false, "another owner within the renewed TTL (renewed at +20s for 30s)"},
		{"acquire", "other", "b", 40 * time.Second, true, "another lease name is independent"},
		{"release", "scheduler", "b", 41 * time.Second, false, "release by a non-holder (no-op)"},
		{"acquire", "scheduler", "b", 42 * time.Second, false, "another owner after a non-holder's release"},
		{"acquire", "scheduler", "b", 51 * time.Second, true, "another owner once the TTL passed"},
		{"acquire", "scheduler", "a", 52 * time.Second, false, "the old holder after losing it"},
		{"release", "scheduler", "b", 53 * time.Second, false, "release by the holder"},
		{"acquire", "scheduler", "a", 54 * time.Second, true, "a released lease"},
	}
	for _, step := range steps {
		if step.do == "release" {
			release(step.name, step.owner, step.at)
			continue
		}
		eq(t, acquire(step.name, step.owner, step.at), step.want, "LeaseAcquire(%s, %s) at +%s: %s", step.name, step.owner, step.at, step.why)
	}
}
