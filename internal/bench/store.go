package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

// The baseline of the store figures: a table shaped like entries, with its
// primary key and (conversation_id, seq) unique index but none of the log's
// bookkeeping, written one row per autocommit statement: the cheapest
// durable write each database does.
const (
	rawCreatePostgres = `CREATE TABLE IF NOT EXISTS bench_raw_entries (
    id uuid PRIMARY KEY, conversation_id uuid NOT NULL, seq bigint NOT NULL,
    kind text NOT NULL, author text NOT NULL, content json NOT NULL, created_at timestamptz NOT NULL,
    UNIQUE (conversation_id, seq))`
	rawInsertPostgres = `INSERT INTO bench_raw_entries (id, conversation_id, seq, kind, author, content, created_at)
VALUES ($1, $2, $3, 'assistant', 'agent:bench', $4, $5)`
	rawCreateSQLite = `CREATE TABLE IF NOT EXISTS bench_raw_entries (
    id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, author TEXT NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL,
    UNIQUE (conversation_id, seq))`
	rawInsertSQLite = `INSERT INTO bench_raw_entries (id, conversation_id, seq, kind, author, content, created_at)
VALUES (?, ?, ?, 'assistant', 'agent:bench', ?, ?)`
)

// entryContent is an entry-sized payload: a paragraph of assistant text.
var entryContent = json.RawMessage(`{"text": "` + strings.Repeat("The quarterly numbers are in and look fine. ", 6) + `"}`)

// rawInserter returns a func inserting one entry-sized row per call, each
// into its own conversation's sequence (safe for concurrent callers).
func rawInserter(ctx context.Context, st store.Store) (func(ctx context.Context) error, error) {
	var seq atomic.Int64
	conv := uuid.New()
	switch s := st.(type) {
	case *postgres.Store:
		if _, err := s.Pool().Exec(ctx, rawCreatePostgres); err != nil {
			return nil, fmt.Errorf("creating the raw insert table: %w", err)
		}
		return func(ctx context.Context) error {
			_, err := s.Pool().Exec(ctx, rawInsertPostgres, uuid.New(), conv, seq.Add(1), string(entryContent), time.Now())
			return err
		}, nil
	case *sqlite.Store:
		if _, err := s.DB().ExecContext(ctx, rawCreateSQLite); err != nil {
			return nil, fmt.Errorf("creating the raw insert table: %w", err)
		}
		c := conv.String()
		return func(ctx context.Context) error {
			_, err := s.DB().ExecContext(ctx, rawInsertSQLite, uuid.NewString(), c, seq.Add(1), sql.RawBytes(entryContent), time.Now().UnixMicro())
			return err
		}, nil
	}
	return nil, fmt.Errorf("no raw insert for a %T store", st)
}

// runAppend interleaves EntryAppend with the raw INSERT, alternating which
// goes first so that neither always runs on a warm cache.
func runAppend(ctx context.Context, e *env) (*Result, error) {
	n := e.opts.size(2000, 40)
	raw, err := rawInserter(ctx, e.st)
	if err != nil {
		return nil, err
	}
	conv, err := e.st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: time.Now()})
	if err != nil {
		return nil, err
	}
	appendOne := func() (time.Duration, error) {
		start := time.Now()
		_, err := e.st.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: conv.ID, Kind: store.EntryAssistant, Author: "agent:bench", Content: entryContent, Now: time.Now(),
		})
		return time.Since(start), err
	}
	rawOne := func() (time.Duration, error) {
		start := time.Now()
		err := raw(ctx)
		return time.Since(start), err
	}
	appends, raws := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for i := range n {
		if i%2 == 1 {
			d, err := rawOne()
			if err != nil {
				return nil, err
			}
			raws = append(raws, d)
		}
		d, err := appendOne()
		if err != nil {
			return nil, err
		}
		appends = append(appends, d)
		if i%2 == 0 {
			d, err := rawOne()
			if err != nil {
				return nil, err
			}
			raws = append(raws, d)
		}
	}
	return &Result{
		Metric: "append p50", Value: ms(Quantile(appends, 0.5)), Unit: "ms",
		Baseline: "raw INSERT p50", BaselineValue: ms(Quantile(raws, 0.5)),
		Extra: map[string]float64{"append_p99_ms": ms(Quantile(appends, 0.99)), "raw_p99_ms": ms(Quantile(raws, 0.99)), "n": float64(n)},
	}, nil
}

// runQueue is QueueBurnDown (a real core.Worker, Options.Workers at once,
// burning down items with a no-op handler), the harness the comparison with
// River runs too; the baseline is as many raw INSERTs from as many
// concurrent writers, one commit each.
func runQueue(ctx context.Context, e *env) (*Result, error) {
	n := e.opts.size(5000, 100)
	res, err := QueueBurnDown(ctx, BurnDownOptions{Store: e.st, Items: n, Workers: e.opts.Workers, Logger: e.opts.Logger})
	if err != nil {
		return nil, err
	}
	counts, err := e.st.WorkCount(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		if c.Count > 0 {
			return nil, fmt.Errorf("after the burn-down %d items are %s", c.Count, c.State)
		}
	}

	raw, err := rawInserter(ctx, e.st)
	if err != nil {
		return nil, err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, e.opts.Workers)
	rawStart := time.Now()
	for range e.opts.Workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := raw(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	rawElapsed := time.Since(rawStart)
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	// The limit: the same number of items claimed and finished by a bare
	// loop, a batch of as many as there are workers per transaction.
	bare, err := bareQueue(ctx, e.st, n, e.opts.Workers)
	if err != nil {
		return nil, err
	}
	return &Result{
		Metric: "burn-down", Value: res.PerSecond(), Unit: "items/s",
		Baseline: fmt.Sprintf("raw INSERTs, %d writers", e.opts.Workers), BaselineValue: float64(n) / rawElapsed.Seconds(),
		Limit: fmt.Sprintf("bare claim-and-finish loop, batches of %d", e.opts.Workers), LimitValue: bare,
		Extra: map[string]float64{"items": float64(n), "workers": float64(e.opts.Workers)},
	}, nil
}

// waitDrained waits until no work item is available or running, polling
// the one count query the metrics use.
func waitDrained(ctx context.Context, st store.Store, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		counts, err := st.WorkCount(ctx)
		if err != nil {
			return err
		}
		busy := int64(0)
		for _, c := range counts {
			if c.State == store.WorkAvailable || c.State == store.WorkRunning {
				busy += c.Count
			}
		}
		if busy == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d work items still queued after %s", busy, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}
