package core_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// A cursor returns each entry once, error entries (no seq) included, and
// moves only when told to.
func TestCursorReadsEachEntryOnce(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: time.Now()})
	require.NoError(t, err)
	add := func(kind store.EntryKind, content any) {
		b, _ := json.Marshal(content)
		_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: kind, Author: "x", Content: b, Now: time.Now()})
		require.NoError(t, err)
	}
	add(store.EntryUser, core.UserContent{Text: "one"})
	add(store.EntryAssistant, core.AssistantContent{Text: "two"})
	add(store.EntryError, core.ErrorContent{Message: "oops"})

	cur := core.NewCursor(st, conv.ID, 0)
	list, err := cur.Fetch(ctx, 1)
	require.NoError(t, err)
	require.Len(t, list, 1, "up to seq 1")
	require.EqualValues(t, 0, cur.Seq(), "Fetch does not move the cursor")
	require.Len(t, cur.Advance(list), 1)
	require.EqualValues(t, 1, cur.Seq())

	list, err = cur.Fetch(ctx, 0)
	require.NoError(t, err)
	got := cur.Advance(list)
	require.Len(t, got, 2, "the reply and the error entry")
	require.EqualValues(t, 2, cur.Seq())
	require.EqualValues(t, 2, core.EntryBound(got[1]), "an error entry is bound by the seq it follows")

	list, err = cur.Fetch(ctx, 0)
	require.NoError(t, err)
	require.Empty(t, cur.Advance(list), "nothing is returned twice, the error entry included")

	cur.SkipTo(5)
	require.EqualValues(t, 5, cur.Seq())
	cur.SkipTo(3)
	require.EqualValues(t, 5, cur.Seq(), "SkipTo never moves back")
}
