package storetest

import (
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

func (s suite) workTests() []namedTest {
	return []namedTest{
		{"EnqueueDefaults", s.testWorkEnqueueDefaults},
		{"UniqueKey", s.testWorkUniqueKey},
		{"UniqueKeyInTx", s.testWorkUniqueKeyInTx},
		{"EnqueueMany", s.testWorkEnqueueMany},
		{"EnqueueGroup", s.testWorkEnqueueGroup},
		{"OutboxRollback", s.testWorkOutboxRollback},
		{"RunAtFuture", s.testWorkRunAt},
		{"PriorityOrder", s.testWorkPriority},
		{"KindsFilter", s.testWorkKinds},
		{"ClaimComplete", s.testWorkClaimComplete},
		{"List", s.testWorkList},
		{"ConcurrentClaim", s.testWorkConcurrentClaim},
		{"ConversationExclusive", s.testWorkConversationExclusive},
		{"LeaseExpiryReclaim", s.testWorkLeaseExpiry},
		{"AvailableOnly", s.testWorkAvailableOnly},
		{"Heartbeat", s.testWorkHeartbeat},
		{"RetryAndGiveUp", s.testWorkRetry},
		{"Prune", s.testWorkPrune},
		{"CompleteMany", s.testWorkCompleteMany},
		{"CompleteManyLeaseLost", s.testWorkCompleteManyLeaseLost},
		{"BatchConcurrent", s.testWorkBatchConcurrent},
		{"InTxGroup", s.testInTxGroup},
	}
}

func enqueue(t testing.TB, q store.Queries, p store.WorkEnqueueParams) *store.WorkItem {
	t.Helper()
	res, err := q.WorkEnqueue(ctxFor(t), &p)
	noErr(t, err, "enqueueing %s work", p.Kind)
	isTrue(t, res.Inserted, "enqueueing %s work without a unique key must insert", p.Kind)
	return res.Item
}

func claim(t testing.TB, q store.Queries, worker string, limit int, ttl time.Duration, now time.Time, kinds ...string) []*store.WorkItem {
	t.Helper()
	items, err := q.WorkClaim(ctxFor(t), &store.WorkClaimParams{Worker: worker, Kinds: kinds, Limit: limit, LeaseTTL: ttl, Now: now})
	noErr(t, err, "claiming work as %s", worker)
	return items
}

func idsOf(items []*store.WorkItem) []uuid.UUID {
	out := make([]uuid.UUID, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func (s suite) testWorkEnqueueDefaults(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	agent, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "worker-agent", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "upserting an agent")

	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, AgentID: &agent.ID, Now: clk.Now()})
	got, err := st.WorkGet(ctx, it.ID)
	noErr(t, err, "getting the enqueued item")
	for _, w := range []*store.WorkItem{it, got} {
		isTrue(t, w.ID != uuid.Nil, "an enqueued item must have an id")
		eq(t, w.Kind, "turn", "kind")
		jsonEq(t, w.Payload, json.RawMessage(`{}`), "payload of an item enqueued with nil payload")
		uuidPtrEq(t, w.ConversationID, c.ID, "conversation id")
		uuidPtrEq(t, w.AgentID, agent.ID, "agent id")
		timeEq(t, w.RunAt, clk.Now(), "run at of an item enqueued with zero RunAt (defaults to Now)")
		eq(t, w.Priority, 0, "priority")
		eq(t, w.Attempts, 0, "attempts of a new item")
		eq(t, w.MaxAttempts, 3, "max attempts of an item enqueued with MaxAttempts 0")
		isTrue(t, w.UniqueKey == nil, "unique key of an item enqueued without one, got %v", w.UniqueKey)
		eq(t, w.State, store.WorkAvailable, "state of a new item")
		eq(t, w.ClaimedBy, "", "claimed by of a new item")
		eq(t, w.LastError, "", "last error of a new item")
		isTrue(t, w.FinishedAt == nil, "a new item is not finished")
		timeEq(t, w.CreatedAt, clk.Now(), "created at")
	}

	runAt := clk.Now().Add(time.Hour)
	it = enqueue(t, st, store.WorkEnqueueParams{Kind: "deliver", Payload: json.RawMessage(`{"entry": 7}`), RunAt: runAt, Priority: 5, MaxAttempts: 7, Now: clk.Now()})
	got, err = st.WorkGet(ctx, it.ID)
	noErr(t, err, "getting an item enqueued with every field set")
	jsonEq(t, got.Payload, json.RawMessage(`{"entry": 7}`), "payload round trip")
	timeEq(t, got.RunAt, runAt, "run at round trip")
	eq(t, got.Priority, 5, "priority round trip")
	eq(t, got.MaxAttempts, 7, "max attempts round trip")
	isTrue(t, got.ConversationID == nil, "conversation of an item enqueued without one, got %v", got.ConversationID)

	_, err = st.WorkGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "getting an unknown work item")
}

func (s suite) testWorkUniqueKey(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	key := "routine:daily:2031-03-04T09:00"

	first, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "fire", UniqueKey: &key, Payload: json.RawMessage(`{"n": 1}`), Now: clk.Now()})
	noErr(t, err, "enqueueing with a unique key")
	isTrue(t, first.Inserted, "the first enqueue with a key must insert")
	isTrue(t, first.Item.UniqueKey != nil && *first.Item.UniqueKey == key, "unique key round trip, got %v", first.Item.UniqueKey)

	second, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "fire", UniqueKey: &key, Payload: json.RawMessage(`{"n": 2}`), Now: clk.Advance(time.Second)})
	noErr(t, err, "enqueueing a second time with the same unique key")
	isTrue(t, !second.Inserted, "the second enqueue with a key must not insert")
	eq(t, second.Item.ID, first.Item.ID, "the item returned for a duplicate key (the first one)")
	jsonEq(t, second.Item.Payload, json.RawMessage(`{"n": 1}`), "payload of the item returned for a duplicate key (the first one's)")

	items, err := st.WorkList(ctx, &store.WorkListParams{Kind: "fire", Limit: 10})
	noErr(t, err, "listing fire work")
	eq(t, len(items), 1, "items after two enqueues with one key")

	other := "routine:daily:2031-03-05T09:00"
	third, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "fire", UniqueKey: &other, Now: clk.Now()})
	noErr(t, err, "enqueueing with another key")
	isTrue(t, third.Inserted && third.Item.ID != first.Item.ID, "another key must insert a new item")
}

// testWorkUniqueKeyInTx: a duplicate key inside a transaction is an answer,
// not an error, so it must not poison the transaction (on Postgres a caught
// unique violation would abort everything after it).
func (s suite) testWorkUniqueKeyInTx(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	key := "inbound:slack:Ev123"
	first := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, UniqueKey: &key, Now: clk.Now()})

	var dup *store.WorkEnqueueResult
	err := st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Content: content("before"), Now: clk.Now()}); err != nil {
			return fmt.Errorf("appending before the duplicate: %w", err)
		}
		var err error
		dup, err = q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, UniqueKey: &key, Now: clk.Now()})
		if err != nil {
			return fmt.Errorf("enqueueing the duplicate: %w", err)
		}
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryAssistant, Content: content("after"), Now: clk.Now()}); err != nil {
			return fmt.Errorf("appending after the duplicate: %w", err)
		}
		return nil
	})
	noErr(t, err, "a transaction that enqueues a duplicate key between two appends")
	isTrue(t, !dup.Inserted, "a duplicate key inside a transaction must not insert")
	eq(t, dup.Item.ID, first.ID, "the item returned for a duplicate key inside a transaction")
	deepEq(t, seqsOf(listEntries(t, st, store.EntryListParams{ConversationID: c.ID})), wantSeqs(1, 2), "entries committed around the duplicate enqueue")
}

// testWorkOutboxRollback: a state change and the work it causes commit
// together or not at all.
func (s suite) testWorkOutboxRollback(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	errBoom := errors.New("boom")

	err := st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Content: content("hello"), Now: clk.Now()}); err != nil {
			return err
		}
		if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: clk.Now()}); err != nil {
			return err
		}
		return errBoom
	})
	errIs(t, err, errBoom, "InTx whose function failed (must return that error)")

	items, err := st.WorkList(ctx, &store.WorkListParams{ConversationID: &c.ID, Limit: 10})
	noErr(t, err, "listing work after the rollback")
	eq(t, len(items), 0, "work items after a rolled-back transaction")
	eq(t, len(listEntries(t, st, store.EntryListParams{ConversationID: c.ID, WithErrors: true})), 0, "entries after a rolled-back transaction")
	eq(t, getConversation(t, st, c.ID).LastSeq, int64(0), "last seq after a rolled-back append")
	eq(t, len(claim(t, st, "w1", 10, time.Minute, clk.Now())), 0, "items claimable after a rolled-back transaction")

	// And the same transaction returning nil commits both.
	err = st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Content: content("hello"), Now: clk.Now()}); err != nil {
			return err
		}
		_, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: clk.Now()})
		return err
	})
	noErr(t, err, "committing an append and an enqueue together")
	eq(t, len(listEntries(t, st, store.EntryListParams{ConversationID: c.ID})), 1, "entries after the commit")
	eq(t, len(claim(t, st, "w1", 10, time.Minute, clk.Now())), 1, "items claimable after the commit")
}

func (s suite) testWorkRunAt(t *testing.T) {
	st := s.newStore(t)
	clk := newClock()
	t0 := clk.Now()
	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "remind", RunAt: t0.Add(time.Minute), Now: t0})

	eq(t, len(claim(t, st, "w1", 10, time.Minute, t0)), 0, "items claimable before run at")
	eq(t, len(claim(t, st, "w1", 10, time.Minute, t0.Add(59*time.Second))), 0, "items claimable a second before run at")
	got := claim(t, st, "w1", 10, time.Minute, t0.Add(time.Minute))
	deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "items claimable once now reaches run at")
}

func (s suite) testWorkPriority(t *testing.T) {
	st := s.newStore(t)
	clk := newClock()
	low := enqueue(t, st, store.WorkEnqueueParams{Kind: "k", Priority: 1, Now: clk.Now()})
	high := enqueue(t, st, store.WorkEnqueueParams{Kind: "k", Priority: 10, Now: clk.Now()})
	mid := enqueue(t, st, store.WorkEnqueueParams{Kind: "k", Priority: 5, Now: clk.Now()})

	var order []uuid.UUID
	for range 3 {
		got := claim(t, st, "w1", 1, time.Minute, clk.Now())
		eq(t, len(got), 1, "items claimed with limit 1")
		order = append(order, got[0].ID)
	}
	deepEq(t, order, []uuid.UUID{high.ID, mid.ID, low.ID}, "claim order (higher priority first: high, mid, low)")
}

func (s suite) testWorkKinds(t *testing.T) {
	st := s.newStore(t)
	clk := newClock()
	turn := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", Now: clk.Now()})
	deliver := enqueue(t, st, store.WorkEnqueueParams{Kind: "deliver", Now: clk.Now()})

	got := claim(t, st, "w1", 10, time.Minute, clk.Now(), "deliver", "sweep")
	deepEq(t, idsOf(got), []uuid.UUID{deliver.ID}, "items claimed with Kinds [deliver sweep]")
	got = claim(t, st, "w1", 10, time.Minute, clk.Now(), "deliver")
	eq(t, len(got), 0, "deliver items left after claiming the only one")
	got = claim(t, st, "w1", 10, time.Minute, clk.Now())
	deepEq(t, idsOf(got), []uuid.UUID{turn.ID}, "items claimed with no kind filter")
}

func (s suite) testWorkClaimComplete(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	for range 5 {
		enqueue(t, st, store.WorkEnqueueParams{Kind: "k", Now: t0})
	}

	first := claim(t, st, "w1", 3, 30*time.Second, t0)
	eq(t, len(first), 3, "items claimed with limit 3 of 5")
	for _, it := range first {
		eq(t, it.State, store.WorkRunning, "state of a claimed item")
		eq(t, it.ClaimedBy, "w1", "claimed by")
		eq(t, it.Attempts, 1, "attempts after the first claim")
		timePtrEq(t, it.LeaseExpiresAt, t0.Add(30*time.Second), "lease expiry of a claimed item")
	}
	rest := claim(t, st, "w2", 10, 30*time.Second, t0)
	eq(t, len(rest), 2, "items left for a second worker")
	eq(t, len(claim(t, st, "w3", 10, 30*time.Second, t0)), 0, "items left once all are claimed")

	it := first[0]
	_, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w2", Now: t0.Add(time.Second)})
	errIs(t, err, store.ErrLeaseLost, "completing an item claimed by someone else")
	doneAt := t0.Add(2 * time.Second)
	done, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", Now: doneAt})
	noErr(t, err, "completing a claimed item")
	eq(t, done.State, store.WorkDone, "state after complete")
	timePtrEq(t, done.FinishedAt, doneAt, "finished at")
	got, err := st.WorkGet(ctx, it.ID)
	noErr(t, err, "getting a completed item")
	eq(t, got.State, store.WorkDone, "state read back after complete")

	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", Now: doneAt})
	errIs(t, err, store.ErrLeaseLost, "completing an item twice")
	_, err = st.WorkHeartbeat(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", LeaseTTL: time.Minute, Now: doneAt})
	errIs(t, err, store.ErrLeaseLost, "heartbeating a completed item")
	// An hour on, every lease has expired: the four items never completed are
	// up for reclaim, the completed one never again.
	reclaimed := claim(t, st, "w3", 10, 30*time.Second, t0.Add(time.Hour))
	eq(t, len(reclaimed), 4, "items reclaimed after every lease expired (the four never completed)")
	isTrue(t, !slices.Contains(idsOf(reclaimed), it.ID), "a completed item must never be claimed again (even when its lease would have expired)")
}

func (s suite) testWorkList(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	a := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: clk.Now()})
	enqueue(t, st, store.WorkEnqueueParams{Kind: "deliver", Now: clk.Now()})
	enqueue(t, st, store.WorkEnqueueParams{Kind: "deliver", Now: clk.Now()})
	claimed := claim(t, st, "w1", 1, time.Minute, clk.Now(), "turn")
	eq(t, len(claimed), 1, "turn items claimed")

	cases := []struct {
		name string
		p    store.WorkListParams
		want int
	}{
		{"all", store.WorkListParams{}, 3},
		{"kind", store.WorkListParams{Kind: "deliver"}, 2},
		{"running", store.WorkListParams{States: []store.WorkState{store.WorkRunning}}, 1},
		{"available or running", store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}}, 3},
		{"done", store.WorkListParams{States: []store.WorkState{store.WorkDone}}, 0},
		{"conversation", store.WorkListParams{ConversationID: &c.ID}, 1},
		{"limit", store.WorkListParams{Limit: 2}, 2},
	}
	for _, tc := range cases {
		items, err := st.WorkList(ctx, &tc.p)
		noErr(t, err, "listing work: %s", tc.name)
		eq(t, len(items), tc.want, "items listed: %s", tc.name)
	}
	items, err := st.WorkList(ctx, &store.WorkListParams{ConversationID: &c.ID})
	noErr(t, err, "listing a conversation's work")
	eq(t, len(items), 1, "items of the conversation")
	eq(t, items[0].ID, a.ID, "the conversation's item")
}

// testWorkConcurrentClaim: several workers drain one queue; every item is
// claimed exactly once and ends done.
func (s suite) testWorkConcurrentClaim(t *testing.T) {
	s.skipHeavyConcurrency(t)
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	total := 10000
	switch {
	case testing.Short():
		total = 1000
	case raceEnabled:
		total = 2000
	}
	const workers, batch = 8, 50

	for start := 0; start < total; start += 500 {
		err := st.InTx(ctx, func(q store.Queries) error {
			for i := start; i < min(start+500, total); i++ {
				if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "load", Payload: json.RawMessage(fmt.Sprintf(`{"i": %d}`, i)), Now: clk.Now()}); err != nil {
					return err
				}
			}
			return nil
		})
		noErr(t, err, "enqueueing items %d.. in one transaction", start)
	}

	var (
		mu      sync.Mutex
		claimed = map[uuid.UUID]string{}
		dups    []string
		wg      sync.WaitGroup
		errs    = make(chan error, workers)
	)
	for w := range workers {
		name := fmt.Sprintf("worker-%d", w)
		wg.Go(func() {
			for {
				items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: name, Limit: batch, LeaseTTL: time.Hour, Now: clk.Now()})
				if err != nil {
					errs <- fmt.Errorf("%s claiming: %w", name, err)
					return
				}
				if len(items) == 0 {
					// Everything was enqueued up front and no lease can
					// expire, so an empty claim means the queue is drained.
					return
				}
				mu.Lock()
				for _, it := range items {
					if prev, ok := claimed[it.ID]; ok {
						dups = append(dups, fmt.Sprintf("%s claimed by %s and %s", it.ID, prev, name))
					}
					claimed[it.ID] = name
				}
				mu.Unlock()
				for _, it := range items {
					if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: name, Now: clk.Now()}); err != nil {
						errs <- fmt.Errorf("%s completing %s: %w", name, it.ID, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	isTrue(t, len(dups) == 0, "items claimed more than once (%d), first: %v", len(dups), dups[:min(len(dups), 3)])
	eq(t, len(claimed), total, "distinct items claimed by %d workers", workers)

	done, err := st.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkDone}, Limit: total + 10})
	noErr(t, err, "listing done items")
	eq(t, len(done), total, "items done after the workers drained the queue")
	left, err := st.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 10})
	noErr(t, err, "listing unfinished items")
	eq(t, len(left), 0, "items left available or running")
}

// testWorkConversationExclusive: one turn at a time per conversation, guarded
// by the conversation's lease, which a claim takes and complete/fail release.
func (s suite) testWorkConversationExclusive(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	a := newConversation(t, st, clk)
	b := newConversation(t, st, clk)
	a1 := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &a.ID, Priority: 1, Now: t0})
	a2 := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &a.ID, Now: t0})
	b1 := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &b.ID, Now: t0})
	free := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", Now: t0})

	got := claim(t, st, "w1", 10, 30*time.Second, t0)
	ids := map[uuid.UUID]bool{}
	for _, it := range got {
		ids[it.ID] = true
	}
	eq(t, len(got), 3, "items claimed at once from two items on A, one on B and one without a conversation (one per conversation)")
	isTrue(t, ids[a1.ID] && ids[b1.ID] && ids[free.ID], "the claim must take A's higher-priority item, B's and the free one; got %v", idsOf(got))

	for _, id := range []uuid.UUID{b1.ID, free.ID} {
		_, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: id, Worker: "w1", Now: t0})
		noErr(t, err, "completing item %s", id)
	}

	conv := getConversation(t, st, a.ID)
	eq(t, conv.LeaseOwner, "w1", "conversation lease owner after its item was claimed")
	timePtrEq(t, conv.LeaseExpiresAt, t0.Add(30*time.Second), "conversation lease expiry after its item was claimed")

	eq(t, len(claim(t, st, "w2", 10, 30*time.Second, t0.Add(time.Second))), 0, "items claimable while A's lease is held (A's second item must wait)")

	_, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: a1.ID, Worker: "w1", Now: t0.Add(2 * time.Second)})
	noErr(t, err, "completing A's first item")
	conv = getConversation(t, st, a.ID)
	isTrue(t, !conv.LeaseHeld(t0.Add(2*time.Second)), "A's lease must be released on complete, got owner %q until %v", conv.LeaseOwner, conv.LeaseExpiresAt)

	got = claim(t, st, "w2", 10, 30*time.Second, t0.Add(3*time.Second))
	deepEq(t, idsOf(got), []uuid.UUID{a2.ID}, "items claimable once A's first item completed")
	eq(t, getConversation(t, st, a.ID).LeaseOwner, "w2", "A's lease owner after w2 claimed its second item")

	_, err = st.WorkFail(ctx, &store.WorkFailParams{ID: a2.ID, Worker: "w2", Error: "model down", RetryAt: t0.Add(time.Hour), Now: t0.Add(4 * time.Second)})
	noErr(t, err, "failing A's second item")
	conv = getConversation(t, st, a.ID)
	isTrue(t, !conv.LeaseHeld(t0.Add(4*time.Second)), "A's lease must be released on fail, got owner %q until %v", conv.LeaseOwner, conv.LeaseExpiresAt)

	// A lease taken outside the queue (a sweep, a manual turn) blocks claims.
	_, err = holdLease(ctx, st, a.ID, "sweeper", 2*time.Hour, t0.Add(5*time.Second))
	noErr(t, err, "taking A's lease once no item holds it")
	eq(t, len(claim(t, st, "w3", 10, 30*time.Second, t0.Add(time.Hour))), 0, "items claimable while someone else holds the conversation's lease")
	noErr(t, st.ConversationLeaseRelease(ctx, &store.ConversationLeaseParams{ConversationID: a.ID, Owner: "sweeper", Now: t0.Add(time.Hour)}), "releasing the sweeper's lease")
	got = claim(t, st, "w3", 10, 30*time.Second, t0.Add(time.Hour))
	deepEq(t, idsOf(got), []uuid.UUID{a2.ID}, "items claimable once the conversation lease was released")
}

func (s suite) testWorkLeaseExpiry(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0})

	got := claim(t, st, "w1", 1, 30*time.Second, t0)
	deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "first claim")
	eq(t, len(claim(t, st, "w2", 1, 30*time.Second, t0.Add(29*time.Second))), 0, "items claimable while the first lease is live")

	expired, err := st.ConversationListExpiredLeases(ctx, &store.ConversationListExpiredLeasesParams{Now: t0.Add(31 * time.Second), Limit: 10})
	noErr(t, err, "listing expired conversation leases")
	eq(t, len(expired), 1, "conversations with an expired lease after the worker went quiet")
	eq(t, expired[0].ID, c.ID, "the conversation of the dead turn")

	got = claim(t, st, "w2", 1, 30*time.Second, t0.Add(31*time.Second))
	deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "reclaim after the lease expired")
	eq(t, got[0].Attempts, 2, "attempts after a reclaim")
	eq(t, got[0].ClaimedBy, "w2", "claimed by after the reclaim")
	eq(t, getConversation(t, st, c.ID).LeaseOwner, "w2", "conversation lease owner after the reclaim")

	late := t0.Add(32 * time.Second)
	_, err = st.WorkHeartbeat(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", LeaseTTL: 30 * time.Second, Now: late})
	errIs(t, err, store.ErrLeaseLost, "heartbeat by the worker whose lease was reclaimed")
	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", Now: late})
	errIs(t, err, store.ErrLeaseLost, "complete by the worker whose lease was reclaimed")
	_, err = st.WorkFail(ctx, &store.WorkFailParams{ID: it.ID, Worker: "w1", Error: "x", RetryAt: late, Now: late})
	errIs(t, err, store.ErrLeaseLost, "fail by the worker whose lease was reclaimed")

	cur, err := st.WorkGet(ctx, it.ID)
	noErr(t, err, "getting the reclaimed item")
	eq(t, cur.State, store.WorkRunning, "state of the reclaimed item after the old worker's refused calls")
	eq(t, cur.ClaimedBy, "w2", "holder of the reclaimed item after the old worker's refused calls")
	eq(t, getConversation(t, st, c.ID).LeaseOwner, "w2", "conversation lease owner after the old worker's refused calls")

	done, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w2", Now: late})
	noErr(t, err, "complete by the new holder")
	eq(t, done.State, store.WorkDone, "state after the new holder completed")
}

// An AvailableOnly claim hands out available items only: an expired
// running item is neither taken over nor failed, and the rest of its
// conversation waits behind it; the next whole claim does both.
func (s suite) testWorkAvailableOnly(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	first := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0})
	last := enqueue(t, st, store.WorkEnqueueParams{Kind: "last", MaxAttempts: 1, Now: t0})
	got := claim(t, st, "w1", 2, 30*time.Second, t0)
	eq(t, len(got), 2, "items of the first claim")
	next := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0.Add(time.Second)})
	free := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", Now: t0.Add(time.Second)})

	late := t0.Add(31 * time.Second)
	hot, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w2", Limit: 10, LeaseTTL: 30 * time.Second, Now: late, AvailableOnly: true})
	noErr(t, err, "claiming available items only")
	deepEq(t, idsOf(hot), []uuid.UUID{free.ID}, "an available-only claim while an item of the conversation ran out of its lease")
	for _, id := range []uuid.UUID{first.ID, last.ID} {
		it, err := st.WorkGet(ctx, id)
		noErr(t, err, "getting an expired item")
		eq(t, it.State, store.WorkRunning, "state of an expired item after an available-only claim")
		eq(t, it.ClaimedBy, "w1", "holder of an expired item after an available-only claim")
	}

	whole := claim(t, st, "w2", 10, 30*time.Second, late)
	deepEq(t, idsOf(whole), []uuid.UUID{first.ID}, "the whole claim after it takes over the expired item before the rest of its conversation")
	eq(t, whole[0].Attempts, 2, "attempts of the item taken over")
	gone, err := st.WorkGet(ctx, last.ID)
	noErr(t, err, "getting the item expired on its last attempt")
	eq(t, gone.State, store.WorkFailed, "state of an item expired on its last attempt after the whole claim")
	waiting, err := st.WorkGet(ctx, next.ID)
	noErr(t, err, "getting the conversation's next item")
	eq(t, waiting.State, store.WorkAvailable, "state of the conversation's next item while the first runs again")
}

// WorkEnqueueMany enqueues as WorkEnqueue would, each result in the order
// of the call: defaults filled in, an existing key's item handed back, two
// items of the call with one key inserted once, and inside a transaction
// nothing of it outlives a rollback.
func (s suite) testWorkEnqueueMany(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	key, order := "many/taken", "many/order"
	first := enqueue(t, st, store.WorkEnqueueParams{Kind: "fire", UniqueKey: &key, Now: clk.Now()})
	fresh := "many/fresh"
	runAt := clk.Now().Add(time.Hour)
	now := clk.Advance(time.Second)
	res, err := st.WorkEnqueueMany(ctx, []*store.WorkEnqueueParams{
		{Kind: "turn", ConversationID: &c.ID, Payload: json.RawMessage(`{"n": 1}`), Priority: 2, OrderingKey: &order, Now: now},
		{Kind: "fire", UniqueKey: &key, Now: now},
		{Kind: "fire", UniqueKey: &fresh, RunAt: runAt, MaxAttempts: 5, Now: now},
		{Kind: "fire", UniqueKey: &fresh, Now: now},
		{Kind: "turn", ConversationID: &c.ID, OrderingKey: &order, Now: now},
	})
	noErr(t, err, "enqueueing five items at once")
	eq(t, len(res), 5, "results of five items")
	for i, want := range []bool{true, false, true, false, true} {
		eq(t, res[i].Inserted, want, "inserted, item %d", i)
	}
	eq(t, res[1].Item.ID, first.ID, "the item of a key enqueued before")
	eq(t, res[3].Item.ID, res[2].Item.ID, "the second item of a key new in the call")
	got, err := st.WorkGet(ctx, res[0].Item.ID)
	noErr(t, err, "getting the first item")
	jsonEq(t, got.Payload, json.RawMessage(`{"n": 1}`), "payload")
	uuidPtrEq(t, got.ConversationID, c.ID, "conversation id")
	eq(t, got.Priority, 2, "priority")
	eq(t, got.MaxAttempts, 3, "max attempts left 0")
	timeEq(t, got.RunAt, now, "run at left zero")
	isTrue(t, got.OrderingKey != nil && *got.OrderingKey == order, "ordering key, got %v", got.OrderingKey)
	got, err = st.WorkGet(ctx, res[2].Item.ID)
	noErr(t, err, "getting the keyed item")
	timeEq(t, got.RunAt, runAt, "run at")
	eq(t, got.MaxAttempts, 5, "max attempts")
	jsonEq(t, got.Payload, json.RawMessage(`{}`), "payload left nil")

	// The call's order is the ordering key's: the first item of the key
	// runs first, the second only after it finished.
	items := claim(t, st, "w", 10, time.Minute, now, "turn")
	deepEq(t, idsOf(items), []uuid.UUID{res[0].Item.ID}, "a claim of the key's items")

	_, err = st.WorkEnqueueMany(ctx, []*store.WorkEnqueueParams{{Kind: "fire", Now: now}, {Kind: "", Now: now}})
	errIs(t, err, store.ErrInvalid, "enqueueing an item without a kind among others")

	rollback := errors.New("roll back")
	var inTx []*store.WorkEnqueueResult
	err = st.InTx(ctx, func(q store.Queries) error {
		var err error
		inTx, err = q.WorkEnqueueMany(ctx, []*store.WorkEnqueueParams{{Kind: "fire", Now: now}, {Kind: "fire", Now: now}})
		if err != nil {
			return err
		}
		return rollback
	})
	errIs(t, err, rollback, "a transaction rolled back")
	eq(t, len(inTx), 2, "results inside the transaction")
	_, err = st.WorkGet(ctx, inTx[0].Item.ID)
	errIs(t, err, store.ErrNotFound, "an item enqueued in a rolled-back transaction")
}

// EnqueueGroup: concurrent calls each get their own item, once, a key
// enqueued twice comes back as the first, and an unkeyed item is refused.
func (s suite) testWorkEnqueueGroup(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	const n = 60
	var wg sync.WaitGroup
	res := make([]*store.WorkEnqueueResult, 2*n)
	errs := make([]error, 2*n)
	for i := range 2 * n {
		key := fmt.Sprintf("group/%d", i%n)
		wg.Go(func() {
			res[i], errs[i] = st.EnqueueGroup(ctx, &store.WorkEnqueueParams{Kind: "inbound", UniqueKey: &key, Now: clk.Now()})
		})
	}
	wg.Wait()
	for i := range n {
		noErr(t, errs[i], "enqueueing in a group")
		noErr(t, errs[i+n], "enqueueing a key twice in a group")
		eq(t, res[i].Item.ID, res[i+n].Item.ID, "the item of key %d, from its two calls", i)
		isTrue(t, res[i].Inserted != res[i+n].Inserted, "one of the two calls with key %d inserted", i)
	}
	all, err := st.WorkList(ctx, &store.WorkListParams{Kind: "inbound"})
	noErr(t, err, "listing the group's items")
	eq(t, len(all), n, "items stored")
	_, err = st.EnqueueGroup(ctx, &store.WorkEnqueueParams{Kind: "inbound", Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "a group enqueue without a key")
}

func (s suite) testWorkHeartbeat(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	c := newConversation(t, st, clk)
	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0})
	claim(t, st, "w1", 1, 30*time.Second, t0)

	beat := t0.Add(20 * time.Second)
	hb, err := st.WorkHeartbeat(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", LeaseTTL: 30 * time.Second, Now: beat})
	noErr(t, err, "heartbeat before expiry")
	timePtrEq(t, hb.LeaseExpiresAt, beat.Add(30*time.Second), "item lease expiry after a heartbeat")
	conv := getConversation(t, st, c.ID)
	eq(t, conv.LeaseOwner, "w1", "conversation lease owner after a heartbeat")
	timePtrEq(t, conv.LeaseExpiresAt, beat.Add(30*time.Second), "conversation lease expiry after a heartbeat")
	timePtrEq(t, conv.HeartbeatAt, beat, "conversation heartbeat at")

	eq(t, len(claim(t, st, "w2", 1, 30*time.Second, t0.Add(40*time.Second))), 0, "items claimable past the first expiry but within the extended lease")
	_, err = st.WorkHeartbeat(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w2", LeaseTTL: 30 * time.Second, Now: t0.Add(41 * time.Second)})
	errIs(t, err, store.ErrLeaseLost, "heartbeat by a worker that never held the item")

	got := claim(t, st, "w2", 1, 30*time.Second, beat.Add(31*time.Second))
	deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "reclaim once the extended lease expired")
}

func (s suite) testWorkRetry(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "deliver", Now: clk.Now()})

	for attempt := 1; attempt <= 3; attempt++ {
		now := clk.Now()
		got := claim(t, st, "w1", 1, 30*time.Second, now)
		deepEq(t, idsOf(got), []uuid.UUID{it.ID}, "claim for attempt %d", attempt)
		eq(t, got[0].Attempts, attempt, "attempts on claim %d", attempt)

		retryAt := now.Add(time.Minute)
		msg := fmt.Sprintf("slack 503 on attempt %d", attempt)
		failed, err := st.WorkFail(ctx, &store.WorkFailParams{ID: it.ID, Worker: "w1", Error: msg, RetryAt: retryAt, Now: now.Add(time.Second)})
		noErr(t, err, "failing attempt %d", attempt)
		eq(t, failed.LastError, msg, "last error after failed attempt %d", attempt)
		if attempt < 3 {
			eq(t, failed.State, store.WorkAvailable, "state after failed attempt %d of 3", attempt)
			timeEq(t, failed.RunAt, retryAt, "run at after failed attempt %d (the retry time)", attempt)
			isTrue(t, failed.FinishedAt == nil, "an item to be retried is not finished")
			eq(t, len(claim(t, st, "w1", 1, 30*time.Second, retryAt.Add(-time.Second))), 0, "items claimable before the retry time")
			clk.Advance(time.Minute)
			continue
		}
		eq(t, failed.State, store.WorkFailed, "state after the last allowed attempt failed")
		timePtrEq(t, failed.FinishedAt, now.Add(time.Second), "finished at of a failed item")
	}
	got, err := st.WorkGet(ctx, it.ID)
	noErr(t, err, "getting the failed item")
	eq(t, got.State, store.WorkFailed, "state read back after giving up")
	eq(t, got.Attempts, 3, "attempts read back after giving up")
	eq(t, got.LastError, "slack 503 on attempt 3", "last error read back after giving up")
	eq(t, len(claim(t, st, "w1", 1, 30*time.Second, clk.Now().Add(24*time.Hour))), 0, "a failed item must never be claimed again")
}

// testWorkPrune: finished items (done or failed; keyed or not) that
// finished before the cutoff go; unfinished items and later ones stay, and
// Limit bounds one call.
func (s suite) testWorkPrune(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()

	finish := func(kind string, key *string, how store.WorkState) *store.WorkItem {
		t.Helper()
		res, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind, UniqueKey: key, MaxAttempts: 1, Now: clk.Now()})
		noErr(t, err, "enqueueing %s", kind)
		it := res.Item
		switch how {
		case store.WorkDone, store.WorkFailed:
			got := claim(t, st, "w1", 1, time.Minute, clk.Now(), kind)
			eq(t, len(got), 1, "items claimed of kind %s", kind)
			if how == store.WorkDone {
				_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "w1", Now: clk.Now()})
			} else {
				_, err = st.WorkFail(ctx, &store.WorkFailParams{ID: it.ID, Worker: "w1", Error: "boom", Now: clk.Now()})
			}
			noErr(t, err, "finishing %s as %s", kind, how)
		}
		return it
	}
	old := []*store.WorkItem{
		finish("done", nil, store.WorkDone),
		finish("done-keyed", ptr("fire:a:2020"), store.WorkDone),
		finish("failed", nil, store.WorkFailed),
	}
	available := finish("available", nil, store.WorkAvailable)
	running := finish("running", nil, store.WorkAvailable)
	claim(t, st, "w2", 1, time.Hour, clk.Now(), "running")
	cutoff := clk.Advance(time.Hour)
	recent := finish("recent", nil, store.WorkDone)
	clk.Advance(time.Hour)

	_, err := st.WorkPrune(ctx, &store.WorkPruneParams{})
	errIs(t, err, store.ErrInvalid, "pruning without FinishedBefore")

	n, err := st.WorkPrune(ctx, &store.WorkPruneParams{FinishedBefore: cutoff, Limit: 2})
	noErr(t, err, "pruning with a limit of 2")
	eq(t, n, 2, "items pruned by a call limited to 2")
	n, err = st.WorkPrune(ctx, &store.WorkPruneParams{FinishedBefore: cutoff})
	noErr(t, err, "pruning the rest")
	eq(t, n, 1, "items pruned by the second call")
	n, err = st.WorkPrune(ctx, &store.WorkPruneParams{FinishedBefore: cutoff})
	noErr(t, err, "pruning again")
	eq(t, n, 0, "items pruned when none is left")

	for _, it := range old {
		_, err := st.WorkGet(ctx, it.ID)
		errIs(t, err, store.ErrNotFound, "getting pruned item %s", it.Kind)
	}
	for _, it := range []*store.WorkItem{available, running, recent} {
		_, err := st.WorkGet(ctx, it.ID)
		noErr(t, err, "getting kept item %s", it.Kind)
	}
}
