package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupLanes: a burst through a group of three lanes commits in at most
// three transactions at once, uses more than one, and every call returns
// after the transaction that ran its function, with no call run twice.
func TestGroupLanes(t *testing.T) {
	var running, most, txs atomic.Int32
	ran := make([]atomic.Int32, 200)
	g := newGroup(func(ctx context.Context, fn func(q Queries) error) error {
		if !GroupCommit(ctx) {
			t.Error("a group's transaction has no GroupCommit mark")
		}
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		txs.Add(1)
		time.Sleep(5 * time.Millisecond) // the round trips of a batch
		return fn(nil)
	}, 128, 3, false)
	var wg sync.WaitGroup
	for i := range ran {
		wg.Go(func() {
			if err := g.do(t.Context(), func(Queries) error { ran[i].Add(1); return nil }); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			if ran[i].Load() != 1 {
				t.Errorf("call %d returned with its function run %d times", i, ran[i].Load())
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m > 3 || m < 2 {
		t.Errorf("at most %d transactions ran at once; want 2 or 3 of the 3 lanes", m)
	}
	if n := txs.Load(); n >= int32(len(ran)) {
		t.Errorf("%d transactions for %d calls: nothing was grouped", n, len(ran))
	}
	// A batch's leader answers its callers before it gives its lane back,
	// so the last lanes may still be finishing their bookkeeping when the
	// last call has returned: wait for them, with a deadline.
	deadline := time.Now().Add(5 * time.Second)
	for {
		g.mu.Lock()
		running, pending := g.running, len(g.pending)
		g.mu.Unlock()
		if running == 0 && pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("5s after the burst: %d batches running, %d calls pending; want none", running, pending)
			break
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupBehind: InTxGroup calls under GroupBehind are grouped apart from
// the others, in group commits that are not ahead of other writers, while
// the others' are.
func TestGroupBehind(t *testing.T) {
	type seen struct{ group, ahead, behindCall bool }
	var mu sync.Mutex
	var got []seen
	inTx := func(ctx context.Context, fn func(q Queries) error) error {
		return fn(nil)
	}
	r := &ruled{}
	r.group = newGroup(inTx, 128, 1, false)
	r.behind = newGroup(inTx, 128, 1, true)
	for _, behind := range []bool{false, true, false, true} {
		ctx := t.Context()
		if behind {
			ctx = GroupBehind(ctx)
		}
		r.group.inTx = func(ctx context.Context, fn func(q Queries) error) error {
			mu.Lock()
			got = append(got, seen{GroupCommit(ctx), GroupAhead(ctx), behind})
			mu.Unlock()
			return fn(nil)
		}
		r.behind.inTx = r.group.inTx
		if err := r.InTxGroup(ctx, func(Queries) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d transactions for 4 calls one after another; want 4", len(got))
	}
	for i, s := range got {
		if !s.group || s.ahead == s.behindCall {
			t.Errorf("call %d (behind %v): GroupCommit %v, GroupAhead %v; want a group commit, ahead only when not behind", i, s.behindCall, s.group, s.ahead)
		}
	}
}
