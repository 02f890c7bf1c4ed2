package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// The batch side of the queue: several items claimed in one WorkClaim and
// completed in one WorkCompleteMany, as the batch completer does. Every
// guarantee of the one-at-a-time calls holds for the batch.

// testWorkCompleteMany: a batch completes exactly the items its worker holds,
// frees their conversations for the next item and wakes that item's workers;
// the others (someone else's, already done, unknown) are left as they were.
func (s suite) testWorkCompleteMany(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	a := newConversation(t, st, clk)
	b := newConversation(t, st, clk)
	a1 := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &a.ID, Priority: 1, Now: t0})
	a2 := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn-next", ConversationID: &a.ID, Now: t0})
	b1 := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &b.ID, Now: t0})
	free := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", Now: t0})
	other := enqueue(t, st, store.WorkEnqueueParams{Kind: "other", Now: t0})

	mine := claim(t, st, "w1", 10, 30*time.Second, t0, "turn", "turn-next")
	deepEq(t, sortedIDs(mine), sortedIDs([]*store.WorkItem{a1, b1, free}), "one claim takes one item per conversation and the free one")
	theirs := claim(t, st, "w2", 10, 30*time.Second, t0, "other")
	eq(t, len(theirs), 1, "items claimed by w2")

	wake, err := st.Subscribe(ctx, store.TopicWork)
	noErr(t, err, "subscribing to work wake-ups")

	doneAt := t0.Add(time.Second)
	ids := append(idsOf(mine), other.ID, uuid.New())
	done, err := st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{IDs: ids, Worker: "w1", Now: doneAt})
	noErr(t, err, "completing a batch")
	deepEq(t, sortedIDs(done), sortedIDs(mine), "items completed: exactly those w1 held (not w2's, not an unknown id)")
	for _, it := range done {
		eq(t, it.State, store.WorkDone, "state of a batch-completed item")
		timePtrEq(t, it.FinishedAt, doneAt, "finished at of a batch-completed item")
		isTrue(t, it.LeaseExpiresAt == nil, "a completed item keeps no lease expiry, got %v", it.LeaseExpiresAt)
	}
	got, err := st.WorkGet(ctx, other.ID)
	noErr(t, err, "getting w2's item")
	eq(t, got.State, store.WorkRunning, "w2's item after w1 named it in a batch")
	eq(t, got.ClaimedBy, "w2", "holder of w2's item after w1 named it in a batch")
	for _, c := range []uuid.UUID{a.ID, b.ID} {
		conv := getConversation(t, st, c)
		eq(t, conv.LeaseOwner, "", "lease owner of conversation %s after its item was batch-completed", c)
		eq(t, conv.Status, store.ConversationIdle, "status of conversation %s after its item was batch-completed", c)
	}
	ok, seen := awaitPayload(wake, store.TopicWork, a2.Kind, 5*time.Second)
	isTrue(t, ok, "the batch freed conversation A: a wake-up for its next item's kind %q must follow, saw %v", a2.Kind, seen)

	again, err := st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{IDs: idsOf(mine), Worker: "w1", Now: doneAt})
	noErr(t, err, "completing a batch a second time")
	eq(t, len(again), 0, "items completed by a second batch of the same ids")
	none, err := st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{Worker: "w1", Now: doneAt})
	noErr(t, err, "completing an empty batch")
	eq(t, len(none), 0, "items completed by an empty batch")
	_, err = st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{IDs: ids, Now: doneAt})
	errIs(t, err, store.ErrInvalid, "completing a batch with no Worker")

	next := claim(t, st, "w3", 10, 30*time.Second, doneAt, "turn", "turn-next")
	deepEq(t, idsOf(next), []uuid.UUID{a2.ID}, "items claimable after the batch: A's second item, nothing completed again")
}

// testWorkCompleteManyLeaseLost: a worker whose lease expired and was taken
// over completes nothing of that item with a batch, and leaves the new
// holder's conversation lease alone.
func (s suite) testWorkCompleteManyLeaseLost(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	a := newConversation(t, st, clk)
	it := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", ConversationID: &a.ID, Now: t0})
	kept := enqueue(t, st, store.WorkEnqueueParams{Kind: "turn", Now: t0})
	first := claim(t, st, "w1", 10, 10*time.Second, t0)
	eq(t, len(first), 2, "items claimed by w1")

	late := t0.Add(time.Minute)
	taken := claim(t, st, "w2", 1, 10*time.Second, late)
	eq(t, len(taken), 1, "items taken over by w2 once w1's leases expired")
	eq(t, taken[0].ID, it.ID, "the item w2 took over")

	done, err := st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{IDs: []uuid.UUID{it.ID, kept.ID}, Worker: "w1", Now: late})
	noErr(t, err, "completing a batch after losing one lease")
	// kept's lease expired too, but nobody took it: w1 still holds it.
	deepEq(t, idsOf(done), []uuid.UUID{kept.ID}, "items completed by the stale worker: only the one nobody took over")
	got, err := st.WorkGet(ctx, it.ID)
	noErr(t, err, "getting the taken-over item")
	eq(t, got.State, store.WorkRunning, "state of the taken-over item after the stale batch")
	eq(t, got.ClaimedBy, "w2", "holder of the taken-over item after the stale batch")
	eq(t, getConversation(t, st, a.ID).LeaseOwner, "w2", "conversation lease after the stale batch")
}

// testWorkBatchConcurrent: workers claiming in batches and completing in
// batches drain the queue with every item run once and no conversation
// running two items at a time.
func (s suite) testWorkBatchConcurrent(t *testing.T) {
	s.skipHeavyConcurrency(t)
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	const convs, perConv, loose, workers, batch = 20, 10, 300, 6, 25
	var convIDs []uuid.UUID
	for range convs {
		convIDs = append(convIDs, newConversation(t, st, clk).ID)
	}
	err := st.InTx(ctx, func(q store.Queries) error {
		for i := range perConv {
			for _, c := range convIDs {
				if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "load", ConversationID: &c, Payload: fmt.Appendf(nil, `{"i": %d}`, i), Now: clk.Now()}); err != nil {
					return err
				}
			}
		}
		for range loose {
			if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "load", Now: clk.Now()}); err != nil {
				return err
			}
		}
		return nil
	})
	noErr(t, err, "enqueueing the load")
	total := convs*perConv + loose

	var (
		mu      sync.Mutex
		ran     = map[uuid.UUID]int{}
		inConv  = map[uuid.UUID]string{} // conversation -> worker running one of its items
		overlap []string
		wg      sync.WaitGroup
		errs    = make(chan error, workers)
	)
	for w := range workers {
		name := fmt.Sprintf("worker-%d", w)
		wg.Go(func() {
			idle := 0
			for idle < 50 {
				items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: name, Limit: batch, LeaseTTL: time.Hour, Now: clk.Now()})
				if err != nil {
					errs <- fmt.Errorf("%s claiming: %w", name, err)
					return
				}
				if len(items) == 0 {
					// Items of busy conversations wait for their turn:
					// empty is not drained until the others finish.
					idle++
					mu.Lock()
					finished := len(ran) == total
					mu.Unlock()
					if finished {
						return
					}
					time.Sleep(time.Millisecond)
					continue
				}
				idle = 0
				mu.Lock()
				for _, it := range items {
					ran[it.ID]++
					if it.ConversationID != nil {
						if prev, busy := inConv[*it.ConversationID]; busy {
							overlap = append(overlap, fmt.Sprintf("conversation %s: %s and %s at once", *it.ConversationID, prev, name))
						}
						inConv[*it.ConversationID] = name
					}
				}
				mu.Unlock()
				// The "work": a conversation counts as busy from its claim
				// until just before its completion commits, so a second
				// claim of it in that window is an overlap.
				time.Sleep(200 * time.Microsecond)
				mu.Lock()
				for _, it := range items {
					if it.ConversationID != nil {
						delete(inConv, *it.ConversationID)
					}
				}
				mu.Unlock()
				done, err := st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{IDs: idsOf(items), Worker: name, Now: clk.Now()})
				if err != nil {
					errs <- fmt.Errorf("%s completing: %w", name, err)
					return
				}
				if len(done) != len(items) {
					errs <- fmt.Errorf("%s completed %d of the %d items it held", name, len(done), len(items))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	isTrue(t, len(overlap) == 0, "conversations handed to two workers at once (%d), first: %v", len(overlap), overlap[:min(len(overlap), 3)])
	eq(t, len(ran), total, "distinct items run by %d batch workers", workers)
	for id, n := range ran {
		eq(t, n, 1, "times item %s was claimed", id)
	}
	left, err := st.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 10})
	noErr(t, err, "listing unfinished items")
	eq(t, len(left), 0, "items left available or running")
}

func sortedIDs(items []*store.WorkItem) []uuid.UUID {
	ids := idsOf(items)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids
}

// testInTxGroup: concurrent InTxGroup calls each see their writes committed
// when they return; one whose function fails writes nothing and gets its own
// error, and the calls sharing its transaction commit all the same.
func (s suite) testInTxGroup(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	const calls = 64
	refuse := errors.New("this member refuses")
	var wg sync.WaitGroup
	errs := make([]error, calls)
	items := make([]uuid.UUID, calls)
	for i := range calls {
		wg.Go(func() {
			key := fmt.Sprintf("group-%d", i)
			errs[i] = st.InTxGroup(ctx, func(q store.Queries) error {
				if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
					ConversationID: conv.ID, Kind: store.EntryUser, Author: "user:u",
					Content: fmt.Appendf(nil, `{"text": "message %d"}`, i), Now: clk.Now(),
				}); err != nil {
					return err
				}
				res, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", UniqueKey: &key, ConversationID: &conv.ID, Now: clk.Now()})
				if err != nil {
					return err
				}
				items[i] = res.Item.ID
				if i%16 == 5 {
					return refuse
				}
				return nil
			})
			if errs[i] != nil {
				return
			}
			// Returned means committed: visible to any reader at once.
			if _, err := st.WorkGet(ctx, items[i]); err != nil {
				errs[i] = fmt.Errorf("reading the item of call %d right after it returned: %w", i, err)
			}
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		if i%16 == 5 {
			errIs(t, err, refuse, "call %d, whose function failed", i)
			_, err := st.WorkGet(ctx, items[i])
			errIs(t, err, store.ErrNotFound, "the item of call %d, whose function failed", i)
			continue
		}
		noErr(t, err, "group call %d", i)
		ok++
	}
	entries, err := st.EntryList(ctx, &store.EntryListParams{ConversationID: conv.ID})
	noErr(t, err, "listing the conversation's entries")
	eq(t, len(entries), ok, "entries committed by the group calls that succeeded")
	for i, e := range entries {
		eq(t, e.SeqValue(), int64(i+1), "seq of entry %d (no gaps from the rolled-back members)", i)
	}
}
