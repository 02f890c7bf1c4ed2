package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/dbtemplate"
	"github.com/switchboardhq/switchboard/store"
)

// BenchmarkSeqAllocation compares the two ways of giving concurrent
// appenders gap-free, unique seqs on one conversation: the driver's (bump
// conversations.last_seq under the row lock, one statement) and retrying on
// the unique violation of (conversation_id, seq). Both run 50 appenders at
// once, the contention the issue asks for; appends/s is the figure to compare.
func BenchmarkSeqAllocation(b *testing.B) {
	dbtemplate.PostgresURL(b)
	const appenders = 50
	content := json.RawMessage(`{"text": "` + strings.Repeat("The quarterly numbers are in and look fine. ", 6) + `"}`)

	run := func(b *testing.B, appendOne func(ctx context.Context, s *Store, conv uuid.UUID) (retries int, err error)) {
		s := openTestStore(b, func(o *Options) { o.MaxConns = appenders })
		ctx := b.Context()
		c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{})
		if err != nil {
			b.Fatalf("creating a conversation: %v", err)
		}
		var next, retries atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, appenders)
		b.ResetTimer()
		start := time.Now()
		for range appenders {
			wg.Go(func() {
				for next.Add(1) <= int64(b.N) {
					r, err := appendOne(ctx, s, c.ID)
					if err != nil {
						errs <- err
						return
					}
					retries.Add(int64(r))
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		es, err := s.EntryList(ctx, &store.EntryListParams{ConversationID: c.ID})
		if err != nil {
			b.Fatalf("listing: %v", err)
		}
		for i, e := range es {
			if e.SeqValue() != int64(i+1) {
				b.Fatalf("entry %d has seq %d: the log has a gap or a duplicate", i+1, e.SeqValue())
			}
		}
		if len(es) != b.N {
			b.Fatalf("log holds %d entries after %d appends", len(es), b.N)
		}
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
		b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
	}

	b.Run("row_lock", func(b *testing.B) {
		run(b, func(ctx context.Context, s *Store, conv uuid.UUID) (int, error) {
			_, err := s.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: store.EntryAssistant, Author: "agent:bench", Content: content})
			return 0, err
		})
	})
	b.Run("retry_on_conflict", func(b *testing.B) {
		run(b, func(ctx context.Context, s *Store, conv uuid.UUID) (int, error) {
			for retries := 0; ; retries++ {
				var seq int64
				err := s.Pool().QueryRow(ctx, appendRetryOnConflict, uuid.New(), conv, string(content), time.Now()).Scan(&seq)
				if errors.Is(err, pgx.ErrNoRows) {
					continue
				}
				return retries, err
			}
		})
	})
}
