package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) faultTests() []namedTest {
	return []namedTest{
		{"DomainErrorsAreNotTransient", s.testFaultDomainErrors},
		{"FaultIsTransient", s.testFaultIsTransient},
		{"FaultIsRetried", s.testFaultIsRetried},
	}
}

func (s suite) needFault(t *testing.T) {
	t.Helper()
	if s.h.TransientFault == nil {
		t.Skipf("%s: Harness.TransientFault is not set", s.h.Name)
	}
}

// appendAndEnqueue is the outbox write the engine does for every message.
func appendAndEnqueue(q store.Queries, t testing.TB, clk *clock, convID uuid.UUID, text string) error {
	if _, err := q.EntryAppend(ctxFor(t), &store.EntryAppendParams{
		ConversationID: convID, Kind: store.EntryUser, Author: "user:u1",
		Content: content("%s", text), Now: clk.Now(),
	}); err != nil {
		return err
	}
	_, err := q.WorkEnqueue(ctxFor(t), &store.WorkEnqueueParams{
		Kind: "turn", ConversationID: &convID, Now: clk.Now(),
	})
	return err
}

// testFaultDomainErrors: a caller that retries transient errors must not
// retry answers about the data.
func (s suite) testFaultDomainErrors(t *testing.T) {
	st, clk := s.newStore(t), newClock()
	c := newConversation(t, st, clk)

	_, err := st.ConversationGet(ctxFor(t), uuid.New())
	errIs(t, err, store.ErrNotFound, "getting an unknown conversation")
	isTrue(t, !store.IsTransient(err), "ErrNotFound must not be transient, got %v", err)

	_, err = st.ConversationCreate(ctxFor(t), &store.ConversationCreateParams{ID: c.ID, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "creating a conversation with an existing id")
	isTrue(t, !store.IsTransient(err), "ErrConflict must not be transient, got %v", err)

	err = st.InTx(ctxFor(t), func(q store.Queries) error {
		_, err := q.EntryAppend(ctxFor(t), &store.EntryAppendParams{
			ConversationID: c.ID, Kind: "bogus", Author: "user:u1", Content: content("x"), Now: clk.Now(),
		})
		return err
	})
	errIs(t, err, store.ErrInvalid, "appending an unknown kind in a transaction")
	isTrue(t, !store.IsTransient(err), "ErrInvalid must not be transient, got %v", err)

	isTrue(t, !store.IsTransient(nil), "IsTransient(nil) must be false")
}

// testFaultIsTransient: with retries off, the fault reaches the caller marked
// transient and as nothing else; the failed transaction left nothing behind,
// and once the fault ends the store works again without being reopened.
func (s suite) testFaultIsTransient(t *testing.T) {
	s.needFault(t)
	st, inject := s.h.TransientFault(t, false)
	clk := newClock()
	c := newConversation(t, st, clk)

	end := inject()
	err := st.InTx(ctxFor(t), func(q store.Queries) error { return appendAndEnqueue(q, t, clk, c.ID, "during the fault") })
	end()
	if err == nil {
		t.Fatalf("%s: the transaction during the fault succeeded; want a transient error (is the fault injected?)", s.h.Name)
	}
	isTrue(t, store.IsTransient(err), "the error of a transaction during the fault must be transient, got %v", err)
	for _, sentinel := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalid, store.ErrLeaseLost, store.ErrOutcomeUnknown} {
		isTrue(t, !errors.Is(err, sentinel), "the fault's error %v must not also be %v", err, sentinel)
	}

	err = st.InTx(ctxFor(t), func(q store.Queries) error { return appendAndEnqueue(q, t, clk, c.ID, "after the fault") })
	noErr(t, err, "appending after the fault ended")
	es := listEntries(t, st, store.EntryListParams{ConversationID: c.ID})
	eq(t, len(es), 1, "entries after one failed and one good append")
	jsonEq(t, es[0].Content, content("after the fault"), "the one entry")
	items, err := st.WorkList(ctxFor(t), &store.WorkListParams{ConversationID: &c.ID})
	noErr(t, err, "listing work")
	eq(t, len(items), 1, "work items after one failed and one good enqueue")
}

// testFaultIsRetried: with retries on, a fault shorter than the budget is
// invisible, and the work is done once.
func (s suite) testFaultIsRetried(t *testing.T) {
	s.needFault(t)
	st, inject := s.h.TransientFault(t, true)
	clk := newClock()
	c := newConversation(t, st, clk)

	end := inject()
	timer := time.AfterFunc(200*time.Millisecond, end) // the fault lasts a while
	defer timer.Stop()
	runs := 0
	err := st.InTx(ctxFor(t), func(q store.Queries) error {
		runs++
		return appendAndEnqueue(q, t, clk, c.ID, "through the fault")
	})
	noErr(t, err, "appending through a fault shorter than the retry budget")
	t.Logf("%s: the transaction ran %d times", s.h.Name, runs)
	es := listEntries(t, st, store.EntryListParams{ConversationID: c.ID})
	eq(t, len(es), 1, "entries after one retried append")
	items, err := st.WorkList(ctxFor(t), &store.WorkListParams{ConversationID: &c.ID})
	noErr(t, err, "listing work")
	eq(t, len(items), 1, "work items after one retried enqueue")

	// A single statement outside a transaction is retried too.
	end = inject()
	timer = time.AfterFunc(200*time.Millisecond, end)
	defer timer.Stop()
	_, err = st.WorkEnqueue(ctxFor(t), &store.WorkEnqueueParams{Kind: "single", ConversationID: &c.ID, Now: clk.Now()})
	noErr(t, err, "enqueueing outside a transaction through a fault")
}
