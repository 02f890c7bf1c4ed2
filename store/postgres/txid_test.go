package postgres

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/store"
)

// TestAppendReturnsTransactionID: the id the hot append hands tryTx (which
// then does not read TxID before COMMIT) is the one TxID reads, the id a
// lost COMMIT answer is resolved by; a transaction that only read has none.
func TestAppendReturnsTransactionID(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, nil)
	ctx := t.Context()
	conv, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "xid"})
	if err != nil {
		t.Fatalf("creating a conversation: %v", err)
	}
	err = s.d.inTx(ctx, func(q *queries) error {
		if _, err := q.ConversationGet(ctx, conv.ID); err != nil {
			return err
		}
		if *q.xid != 0 {
			t.Errorf("a transaction that only read: want no id recorded, got %d", *q.xid)
		}
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryUser, Author: "user:u", Content: []byte(`{"text":"hi"}`)}); err != nil {
			return err
		}
		want, err := q.db.TxID(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
		if got := *q.xid; got == 0 || got != want {
			t.Errorf("after an append: want the transaction id %d recorded, got %d", want, got)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("appending in a transaction: %v", err)
	}
}
