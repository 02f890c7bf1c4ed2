package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// TestStatementsPreparedOnFirstUse: opening a store prepares nothing; a
// statement is prepared on the pool that first runs it, once, and a write
// met inside a transaction (which holds the writer's only connection) is
// prepared after it without waiting on itself.
func TestStatementsPreparedOnFirstUse(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := openAt(t, filepath.Join(t.TempDir(), "switchboard.db"))
	prepared := func() (w, r int) { return s.d.wstmts.len(), s.d.rstmts.len() }

	// Before Migrate the tables are missing: the read fails, nothing is
	// cached, and it is prepared once the table exists.
	if _, err := s.ConversationGet(ctx, uuid.New()); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("reading a conversation before Migrate: want the missing table's error, got %v", err)
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// Only the migration runner's own statements, not the ~250 queries.
	w0, r0 := prepared()
	if w0 > 5 || r0 != 0 {
		t.Fatalf("after Open and Migrate: want at most the migration runner's statements prepared, got %d on the writer and %d on the readers", w0, r0)
	}

	c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0})
	if err != nil {
		t.Fatalf("first write on unprepared statements: %v", err)
	}
	w1, _ := prepared()
	if w1 <= w0 {
		t.Fatalf("after the first write: want its statements prepared on the writer, got %d, as before it", w1)
	}
	if _, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0}); err != nil {
		t.Fatal(err)
	}
	if w, _ := prepared(); w != w1 {
		t.Fatalf("the same write again: want its %d statements reused, got %d prepared", w1, w)
	}

	// Readers racing for the first preparation of one statement: one is kept.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := s.ConversationGet(ctx, c.ID)
			if err == nil && got.ID != c.ID {
				err = errors.New("read another conversation")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent first reads: %v", err)
		}
	}
	if _, r := prepared(); r != 1 {
		t.Fatalf("after reads of one query: want 1 statement prepared on the readers, got %d", r)
	}

	// Inside InTx, statements met for the first time and ones already
	// prepared both run on the transaction.
	err = s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.ConversationGet(ctx, c.ID); err != nil {
			return err
		}
		_, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Now: t0})
		return err
	})
	if err != nil {
		t.Fatalf("InTx on unprepared statements: %v", err)
	}
	if w, _ := prepared(); w <= w1 {
		t.Fatalf("after InTx met new statements: want more than %d prepared on the writer, got %d", w1, w)
	}
	if conv, err := s.ConversationGet(ctx, c.ID); err != nil || conv.LastSeq != 1 {
		t.Fatalf("after the append in InTx: want last seq 1, got %v (%v)", conv, err)
	}
}
