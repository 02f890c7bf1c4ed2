package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/dbtemplate"
	"github.com/switchboardhq/switchboard/store"
)

// countingHandler counts log records by message and drops them (a chaos run
// logs hundreds of retries).
type countingHandler struct {
	mu     sync.Mutex
	counts map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Message]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for msg, c := range h.counts {
		if strings.HasPrefix(msg, prefix) {
			n += c
		}
	}
	return n
}

// TestTerminatedConnectionsAreInvisible kills every connection of the store,
// pool and listener, every 50ms while 200 transactions each append an entry
// and enqueue its turn. None may fail, and each must have happened exactly
// once: no seq taken twice or skipped, no entry or item missing or doubled.
// Then the store, pool and listener, works without being reopened.
func TestTerminatedConnectionsAreInvisible(t *testing.T) {
	t.Parallel()
	app := freshSchema(t)
	logs := &countingHandler{counts: map[string]int{}}
	s := openTestStore(t, func(o *Options) {
		o.URL = withAppName(t, dbtemplate.PostgresURL(t), app)
		o.MaxConns = 8
		o.Logger = slog.New(logs)
	})
	ctx := t.Context()
	admin := adminConn(t)

	entries, err := s.Subscribe(ctx, store.TopicEntries)
	if err != nil {
		t.Fatalf("subscribing: %v", err)
	}
	convs := make([]uuid.UUID, 4)
	for i := range convs {
		c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "chaos"})
		if err != nil {
			t.Fatalf("creating conversation %d: %v", i, err)
		}
		convs[i] = c.ID
	}

	// The killer: the pool's sessions by application name, and the listener's,
	// every 50ms, but only once some transaction committed since its last
	// cut. On a loaded machine a transaction can take longer than 50ms, and
	// cutting faster than anything can finish tests nothing but the budget.
	stop := make(chan struct{})
	var killed, committed atomic.Int64
	var killerWG sync.WaitGroup
	killerWG.Add(1)
	go func() {
		defer killerWG.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		lastCommitted := int64(-1)
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if c := committed.Load(); c == lastCommitted {
				continue
			} else {
				lastCommitted = c
			}
			var n int
			if err := admin.QueryRow(ctx, terminateApp, app, 0).Scan(&n); err != nil {
				t.Errorf("terminating the store's sessions: %v", err)
				return
			}
			killed.Add(int64(n))
			if pid := s.d.listener.backendPID(); pid != 0 {
				var ok bool
				_ = admin.QueryRow(ctx, terminateBackend, int32(pid)).Scan(&ok)
			}
		}
	}()

	const total, workers = 200, 8
	jobs := make(chan int)
	errs := make(chan error, total)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				conv := convs[i%len(convs)]
				payload := json.RawMessage(fmt.Sprintf(`{"i": %d}`, i))
				err := s.InTx(ctx, func(q store.Queries) error {
					if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{
						ConversationID: conv, Kind: store.EntryUser, Author: "user:u1", Content: payload,
					}); err != nil {
						return fmt.Errorf("appending %d: %w", i, err)
					}
					_, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "chaos", ConversationID: &conv, Payload: payload})
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("transaction %d: %w", i, err)
				}
				committed.Add(1)
			}
		}()
	}
	start := time.Now()
	for i := range total {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(stop)
	killerWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d transactions in %s; %d sessions terminated; %d retries; lost commit answers: %d had committed, %d had not",
		total, time.Since(start).Round(time.Millisecond), killed.Load(), logs.count("store: transient fault"),
		logs.count("store: the answer to a commit was lost but"), logs.count("store: the answer to a commit was lost and"))
	if killed.Load() == 0 {
		t.Fatal("no session was terminated: the test did not test anything")
	}

	// Exactly once: per conversation seqs 1..n, and every i once among
	// entries and once among work items.
	seen := map[int]int{}
	for _, conv := range convs {
		es, err := s.EntryList(ctx, &store.EntryListParams{ConversationID: conv})
		if err != nil {
			t.Fatalf("listing entries of %s: %v", conv, err)
		}
		for k, e := range es {
			if e.SeqValue() != int64(k+1) {
				t.Errorf("conversation %s: entry %d has seq %d, want %d (seqs must be 1..n without gaps)", conv, k, e.SeqValue(), k+1)
			}
			var c struct{ I int }
			if err := json.Unmarshal(e.Content, &c); err != nil {
				t.Fatalf("entry content %s: %v", e.Content, err)
			}
			seen[c.I]++
		}
	}
	items, err := s.WorkList(ctx, &store.WorkListParams{Kind: "chaos"})
	if err != nil {
		t.Fatalf("listing work: %v", err)
	}
	enq := map[int]int{}
	for _, it := range items {
		var c struct{ I int }
		if err := json.Unmarshal(it.Payload, &c); err != nil {
			t.Fatalf("work payload %s: %v", it.Payload, err)
		}
		enq[c.I]++
	}
	for i := range total {
		if seen[i] != 1 || enq[i] != 1 {
			t.Errorf("transaction %d: %d entries and %d work items, want exactly 1 of each", i, seen[i], enq[i])
		}
	}
	if len(seen) != total || len(enq) != total {
		t.Errorf("got %d distinct entries and %d distinct work items, want %d of each", len(seen), len(enq), total)
	}

	// Recovery: one last cut, then plain calls succeed and the listener is back.
	var n int
	if err := admin.QueryRow(ctx, terminateApp, app, 5000).Scan(&n); err != nil {
		t.Fatalf("terminating the store's sessions: %v", err)
	}
	if _, err := s.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: convs[0], Kind: store.EntrySystem, Author: "system", Content: json.RawMessage(`{}`),
	}); err != nil {
		t.Fatalf("appending after the last cut: %v", err)
	}
	awaitPayload(t, entries, convs[0].String())
}
