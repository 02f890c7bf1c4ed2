package bench

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestFillWritesRowsTheServiceReads: a fill's rows read back through the
// store as the service's own do: every log complete up to its last_seq,
// the long one too, the list's default order newest first with the hidden
// ones left out, and the finished work counted as done or failed.
func TestFillWritesRowsTheServiceReads(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		ctx := t.Context()
		f, err := fill(ctx, st, fillSpec{Conversations: 300, Entries: 3000, LongEntries: 500, FinishedWork: 2000, Now: time.Now(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		long, err := st.ConversationGet(ctx, f.Long)
		if err != nil {
			t.Fatal(err)
		}
		es, err := st.EntryList(ctx, &store.EntryListParams{ConversationID: f.Long})
		if err != nil {
			t.Fatal(err)
		}
		if long.LastSeq != f.LongSeqs || int64(len(es)) != f.LongSeqs || f.LongSeqs != 500+(3000-500)/300 {
			t.Fatalf("the long conversation: last_seq %d, %d entries, filled %d", long.LastSeq, len(es), f.LongSeqs)
		}
		if len(f.Sample) < 50 {
			t.Fatalf("%d sample conversations, want dozens", len(f.Sample))
		}
		for _, id := range f.Sample[:10] {
			c, err := st.ConversationGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			es, err := st.EntryList(ctx, &store.EntryListParams{ConversationID: id})
			if err != nil {
				t.Fatal(err)
			}
			if c.LastSeq != 8 || len(es) != 8 || es[7].Kind != store.EntryAssistant {
				t.Fatalf("conversation %s: last_seq %d, %d entries; want 8, the last an answer", id, c.LastSeq, len(es))
			}
		}
		ls, err := st.ConversationSearch(ctx, &store.ConversationSearchParams{Visibility: store.Visibility{All: true}, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) < 250 || len(ls) >= 300 || ls[0].Conversation.ID != f.Long {
			t.Fatalf("the list holds %d of 300 (want the archived and deleted left out), first %s (want the long one, the newest)", len(ls), ls[0].Conversation.ID)
		}
		counts, err := st.WorkCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		failed := int64(0)
		for _, c := range counts {
			if c.State != store.WorkFailed {
				t.Fatalf("the queue holds %d %s items after the fill, want none", c.Count, c.State)
			}
			failed += c.Count
		}
		if failed == 0 || failed > 40 {
			t.Fatalf("%d failed items of 2,000, want about one in 200", failed)
		}
	})
}
