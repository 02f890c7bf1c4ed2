package app

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestInstanceAcquire: the instance id's hold, on each store, with the
// holder's liveness given (a process on another host cannot be seen).
func TestInstanceAcquire(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		const ttl = time.Second
		opts := func(st store.Store, v verdict, fallback bool) instanceOptions {
			return instanceOptions{
				Store: st, ID: "inst", Fallback: fallback, TTL: ttl, Logger: testenv.Logger(t), Now: time.Now,
				Verdict: func(*store.InstanceLease) verdict { return v },
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()

		t.Run("an alive holder refuses serve at once, and chat takes its own id", func(t *testing.T) {
			st := open(t)
			first, err := acquireInstance(ctx, opts(st, unknown, false))
			if err != nil {
				t.Fatal(err)
			}
			defer first.release(ctx)
			_, err = acquireInstance(ctx, opts(st, alive, false))
			if !errors.Is(err, ErrInstanceHeld) || !strings.Contains(err.Error(), "SWITCHBOARD_INSTANCE_ID") {
				t.Fatalf("a second serve under a live id: %v, want ErrInstanceHeld naming SWITCHBOARD_INSTANCE_ID", err)
			}
			chat, err := acquireInstance(ctx, opts(st, alive, true))
			if err != nil {
				t.Fatal(err)
			}
			defer chat.release(ctx)
			if !strings.HasPrefix(chat.ID(), "inst-chat-") {
				t.Fatalf("chat's id %q, want one of its own (inst-chat-…)", chat.ID())
			}
			if l, err := st.InstanceLeaseGet(ctx, "inst"); err != nil || l.Holder != first.p.Holder {
				t.Fatalf("the id after chat started: %+v, %v; want the first process to hold it still", l, err)
			}
		})

		t.Run("a holder proven dead is taken over at once", func(t *testing.T) {
			st := open(t)
			dead1, err := acquireInstance(ctx, opts(st, unknown, false))
			if err != nil {
				t.Fatal(err)
			}
			close(dead1.stop) // no more heartbeats, no release: a kill -9
			<-dead1.done
			next, err := acquireInstance(ctx, opts(st, dead, false))
			if err != nil {
				t.Fatalf("taking over from a dead holder: %v", err)
			}
			defer next.release(ctx)
			if _, err := st.InstanceLeaseHeartbeat(ctx, &store.InstanceLeaseParams{InstanceID: "inst", Holder: dead1.p.Holder, TTL: ttl, Now: time.Now()}); !errors.Is(err, store.ErrLeaseLost) {
				t.Fatalf("the dead holder's heartbeat after the take-over: %v, want ErrLeaseLost", err)
			}
		})

		t.Run("unseen holder: serve waits for the lease to lapse, or refuses on a heartbeat", func(t *testing.T) {
			st := open(t)
			silent, err := acquireInstance(ctx, opts(st, unknown, false))
			if err != nil {
				t.Fatal(err)
			}
			close(silent.stop) // crashed on another host
			<-silent.done
			after, err := acquireInstance(ctx, opts(st, unknown, false))
			if err != nil {
				t.Fatalf("a holder that never heartbeats again: %v, want the id once its lease lapsed", err)
			}
			// after heartbeats (every TTL/3): a third process sees it alive.
			_, err = acquireInstance(ctx, opts(st, unknown, false))
			if !errors.Is(err, ErrInstanceHeld) {
				t.Fatalf("a holder that heartbeats while watched: %v, want ErrInstanceHeld", err)
			}
			if err := after.release(ctx); err != nil {
				t.Fatal(err)
			}
			again, err := acquireInstance(ctx, opts(st, unknown, false))
			if err != nil {
				t.Fatalf("after a graceful release: %v, want the id at once", err)
			}
			defer again.release(ctx)
		})

		t.Run("a failed heartbeat is what readiness reports", func(t *testing.T) {
			st := open(t)
			h, err := acquireInstance(ctx, opts(st, unknown, false))
			if err != nil {
				t.Fatal(err)
			}
			close(h.stop) // the test beats by hand
			<-h.done
			if err := h.writable(ctx, 0); err != nil {
				t.Fatalf("writable on a healthy store: %v", err)
			}
			var calls atomic.Int32
			h.st = failingWrites{Store: st, calls: &calls}
			if err := h.writable(ctx, 0); err == nil {
				t.Fatal("writable while every write fails: nil, want the write's error")
			}
			if err := h.writable(ctx, time.Hour); err == nil || calls.Load() != 1 {
				t.Fatalf("writable within the freshness window: %v after %d writes, want the last error without a new write", err, calls.Load())
			}
			h.st = st
			if err := h.writable(ctx, 0); err != nil {
				t.Fatalf("writable once writes work again: %v", err)
			}
		})
	})
}

// failingWrites fails every instance lease heartbeat, as a full disk.
type failingWrites struct {
	store.Store
	calls *atomic.Int32
}

func (f failingWrites) InstanceLeaseHeartbeat(context.Context, *store.InstanceLeaseParams) (*store.InstanceLease, error) {
	f.calls.Add(1)
	return nil, errors.New("database or disk is full")
}
