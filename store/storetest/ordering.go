package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// The ordering key: items that share one run one at a time, in insertion
// order, across claimers, as a conversation's items do under its lease, for
// work that has no conversation yet (the inbound events of one thread).

func (s suite) orderingTests() []namedTest {
	return []namedTest{
		{"OrderingKeyOneAtATime", s.testWorkOrderingKey},
		{"OrderingKeyRetryHolds", s.testWorkOrderingKeyRetry},
		{"OrderingKeyExpired", s.testWorkOrderingKeyExpired},
		{"OrderingKeyWakesNext", s.testWorkOrderingKeyWakes},
		{"OrderingKeyConcurrent", s.testWorkOrderingKeyConcurrent},
	}
}

func keyOf(s string) *string { return &s }

// testWorkOrderingKey: two items of one key are handed out one at a time, in
// insertion order (even when the later one has the higher priority), while
// items of other keys and items without one are not held up.
func (s suite) testWorkOrderingKey(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a1 := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: keyOf("slack:T1/C1/1.1"), Now: clk.Now()})
	a2 := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: keyOf("slack:T1/C1/1.1"), Priority: 5, MaxAttempts: 1, Now: clk.Advance(time.Millisecond)})
	b1 := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: keyOf("slack:T1/C1/2.2"), Now: clk.Advance(time.Millisecond)})
	free := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", Now: clk.Advance(time.Millisecond)})
	eq(t, *a1.OrderingKey, "slack:T1/C1/1.1", "ordering key read back from the enqueue")
	isTrue(t, free.OrderingKey == nil, "an item enqueued without an ordering key has none, got %v", free.OrderingKey)

	now := clk.Advance(time.Second)
	got := claim(t, st, "w1", 10, 30*time.Second, now)
	ids := map[uuid.UUID]bool{}
	for _, it := range got {
		ids[it.ID] = true
	}
	isTrue(t, len(got) == 3 && ids[a1.ID] && ids[b1.ID] && ids[free.ID],
		"one claim of 10 from two items of key A (the second of higher priority), one of key B and one without a key must take A's first, B's and the free one; got %v (a1 %s, a2 %s)", idsOf(got), a1.ID, a2.ID)
	for _, it := range got {
		if it.ID == a1.ID {
			isTrue(t, it.OrderingKey != nil && *it.OrderingKey == *a1.OrderingKey, "a claimed item carries its ordering key, got %v", it.OrderingKey)
		}
	}

	eq(t, len(claim(t, st, "w2", 10, 30*time.Second, now)), 0, "items claimable by another worker while A's first item runs")

	_, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: a1.ID, Worker: "w1", Now: now})
	noErr(t, err, "completing A's first item")
	got = claim(t, st, "w2", 10, 30*time.Second, now)
	deepEq(t, idsOf(got), []uuid.UUID{a2.ID}, "items claimable once A's first item is done")

	// An item failed for good ends its hold as well.
	a3 := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: keyOf("slack:T1/C1/1.1"), Now: clk.Advance(time.Millisecond)})
	now = clk.Advance(time.Second)
	eq(t, len(claim(t, st, "w1", 10, 30*time.Second, now)), 0, "items claimable while A's second item runs")
	failed, err := st.WorkFail(ctx, &store.WorkFailParams{ID: a2.ID, Worker: "w2", Error: "bad event", RetryAt: now, Now: now})
	noErr(t, err, "failing A's second item")
	eq(t, failed.State, store.WorkFailed, "state of an item failed on its last attempt")
	deepEq(t, idsOf(claim(t, st, "w1", 10, 30*time.Second, now)), []uuid.UUID{a3.ID}, "items claimable once A's second item failed for good")
}

// testWorkOrderingKeyRetry: an item of a key that failed and waits for its
// retry still goes first: the key's order is strict.
func (s suite) testWorkOrderingKeyRetry(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	key := keyOf("slack:T1/D1")
	first := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: key, MaxAttempts: 3, Now: clk.Now()})
	second := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: key, Now: clk.Advance(time.Millisecond)})

	now := clk.Advance(time.Second)
	deepEq(t, idsOf(claim(t, st, "w1", 10, 30*time.Second, now)), []uuid.UUID{first.ID}, "first claim")
	retryAt := now.Add(time.Minute)
	_, err := st.WorkFail(ctx, &store.WorkFailParams{ID: first.ID, Worker: "w1", Error: "store down", RetryAt: retryAt, Now: now})
	noErr(t, err, "failing the first item with a retry")
	eq(t, len(claim(t, st, "w1", 10, 30*time.Second, now.Add(time.Second))), 0, "items claimable while the key's first item waits for its retry")

	deepEq(t, idsOf(claim(t, st, "w1", 10, 30*time.Second, retryAt)), []uuid.UUID{first.ID}, "claim at the retry time")
	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: first.ID, Worker: "w1", Now: retryAt})
	noErr(t, err, "completing the retried first item")
	deepEq(t, idsOf(claim(t, st, "w1", 10, 30*time.Second, retryAt)), []uuid.UUID{second.ID}, "claim after the first item is done")
}

// testWorkOrderingKeyExpired: an item of a key whose worker died is taken
// over before the next item of its key runs, never beside it.
func (s suite) testWorkOrderingKeyExpired(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	key := keyOf("slack:T1/C9/3.3")
	first := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: key, Now: clk.Now()})
	second := enqueue(t, st, store.WorkEnqueueParams{Kind: "inbound", OrderingKey: key, Now: clk.Advance(time.Millisecond)})

	t0 := clk.Advance(time.Second)
	deepEq(t, idsOf(claim(t, st, "dead", 10, 30*time.Second, t0)), []uuid.UUID{first.ID}, "first claim")
	eq(t, len(claim(t, st, "w2", 10, 30*time.Second, t0.Add(29*time.Second))), 0, "items claimable while the first item's lease is live")
	got := claim(t, st, "w2", 10, 30*time.Second, t0.Add(31*time.Second))
	deepEq(t, idsOf(got), []uuid.UUID{first.ID}, "claim once the first item's lease expired (the item taken over, the second held back)")
	eq(t, got[0].Attempts, 2, "attempts of the item taken over")
	_, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: first.ID, Worker: "w2", Now: t0.Add(32 * time.Second)})
	noErr(t, err, "completing the item taken over")
	deepEq(t, idsOf(claim(t, st, "w2", 10, 30*time.Second, t0.Add(32*time.Second))), []uuid.UUID{second.ID}, "claim after the item taken over is done")
}

// testWorkOrderingKeyWakes: finishing an item of a key wakes the workers of
// the next one's kind, which it made claimable.
func (s suite) testWorkOrderingKeyWakes(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	key := keyOf("slack:T1/C7/" + uniqueKind("ts"))
	firstKind, nextKind := uniqueKind("first"), uniqueKind("next")
	ch := subscribe(t, st, store.TopicWork)
	first := enqueue(t, st, store.WorkEnqueueParams{Kind: firstKind, OrderingKey: key, Now: clk.Now()})
	enqueue(t, st, store.WorkEnqueueParams{Kind: nextKind, OrderingKey: key, Now: clk.Advance(time.Millisecond)})
	// The enqueue's own wake-up first, so that the one awaited below is
	// the completion's.
	ok, seen := awaitPayload(ch, store.TopicWork, nextKind, waitLong)
	isTrue(t, ok, "a %s notification for the enqueue of %q within %s; saw %v", store.TopicWork, nextKind, waitLong, seen)
	now := clk.Advance(time.Second)
	deepEq(t, idsOf(claim(t, st, "w1", 10, 30*time.Second, now, firstKind, nextKind)), []uuid.UUID{first.ID}, "first claim")

	_, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: first.ID, Worker: "w1", Now: now})
	noErr(t, err, "completing the key's first item")
	ok, seen = awaitPayload(ch, store.TopicWork, nextKind, waitLong)
	isTrue(t, ok, "a %s notification for %q (the kind of the key's next item) within %s of the first one's completion; saw %v", store.TopicWork, nextKind, waitLong, seen)
}

// testWorkOrderingKeyConcurrent: claimers racing over many keys never run
// two items of a key at once, and run each key's items in insertion order.
func (s suite) testWorkOrderingKeyConcurrent(t *testing.T) {
	s.skipHeavyConcurrency(t)
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	const keys, perKey, workers, batch = 40, 6, 6, 8

	order := map[uuid.UUID][2]int{} // item -> key, position
	err := st.InTx(ctx, func(q store.Queries) error {
		for i := range perKey {
			for k := range keys {
				r, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "inbound", OrderingKey: keyOf(fmt.Sprintf("key-%d", k)), Now: clk.Advance(time.Microsecond)})
				if err != nil {
					return err
				}
				order[r.Item.ID] = [2]int{k, i}
			}
		}
		return nil
	})
	noErr(t, err, "enqueueing %d items over %d keys", keys*perKey, keys)

	// running holds each key's item between its claim and the start of its
	// completion: a claim of the key's next item in that span breaks the
	// rule (once completion has started, its commit may already be seen).
	var (
		mu       sync.Mutex
		running  = map[int]uuid.UUID{}
		next     = map[int]int{}
		done     int
		problems []string
		wg       sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	total := keys * perKey
	now := clk.Advance(time.Second)
	deadline := time.Now().Add(time.Minute)
	for w := range workers {
		name := fmt.Sprintf("worker-%d", w)
		wg.Go(func() {
			for {
				mu.Lock()
				finished := done
				mu.Unlock()
				if finished == total {
					return
				}
				if time.Now().After(deadline) {
					fail("%s: the queue was not drained within a minute (%d of %d done)", name, finished, total)
					return
				}
				items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: name, Limit: batch, LeaseTTL: time.Hour, Now: now})
				if err != nil {
					fail("%s claiming: %v", name, err)
					return
				}
				if len(items) == 0 {
					// The rest are held behind other workers' items: poll.
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				for _, it := range items {
					kp := order[it.ID]
					if other, ok := running[kp[0]]; ok {
						problems = append(problems, fmt.Sprintf("key %d: %s claimed while %s of the key runs", kp[0], it.ID, other))
					}
					if next[kp[0]] != kp[1] {
						problems = append(problems, fmt.Sprintf("key %d: item %d handed out when item %d was next", kp[0], kp[1], next[kp[0]]))
					}
					running[kp[0]] = it.ID
					next[kp[0]] = kp[1] + 1
				}
				mu.Unlock()
				for _, it := range items {
					mu.Lock()
					if running[order[it.ID][0]] == it.ID {
						delete(running, order[it.ID][0])
					}
					mu.Unlock()
					if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: name, Now: now}); err != nil {
						fail("%s completing %s: %v", name, it.ID, err)
						return
					}
					mu.Lock()
					done++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	isTrue(t, len(problems) == 0, "ordering broken under %d concurrent claimers (%d problems), first: %v", workers, len(problems), problems[:min(len(problems), 5)])
	left, err := st.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 10})
	noErr(t, err, "listing unfinished items")
	eq(t, len(left), 0, "items left available or running after the workers drained the queue")
}
