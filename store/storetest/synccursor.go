package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) syncCursorTests() []namedTest {
	return []namedTest{{"SaveReplaceRead", s.testSyncCursor}}
}

// testSyncCursor: a cursor never saved is ErrNotFound; a save is read back;
// a later save replaces it; names are apart; an empty cursor is refused.
func (s suite) testSyncCursor(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	const name = "matrix:@bot:example.org"

	if _, err := st.SyncCursorGet(ctx, name); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SyncCursorGet before any save: err %v, want ErrNotFound", err)
	}
	noErr(t, st.SyncCursorSave(ctx, &store.SyncCursorSaveParams{Name: name, Cursor: "s72594_4483_1934", Now: t0}), "saving the first cursor")
	noErr(t, st.SyncCursorSave(ctx, &store.SyncCursorSaveParams{Name: "matrix:@other:example.org", Cursor: "s1", Now: t0}), "saving another name's cursor")
	c, err := st.SyncCursorGet(ctx, name)
	noErr(t, err, "reading the cursor")
	if c.Cursor != "s72594_4483_1934" || !c.UpdatedAt.Equal(t0) {
		t.Fatalf("cursor after the first save = %+v, want s72594_4483_1934 at %s", c, t0)
	}
	t1 := t0.Add(time.Minute)
	noErr(t, st.SyncCursorSave(ctx, &store.SyncCursorSaveParams{Name: name, Cursor: "s72600_4490_1940", Now: t1}), "saving the next cursor")
	c, err = st.SyncCursorGet(ctx, name)
	noErr(t, err, "reading the cursor again")
	if c.Cursor != "s72600_4490_1940" || !c.UpdatedAt.Equal(t1) {
		t.Fatalf("cursor after the second save = %+v, want s72600_4490_1940 at %s", c, t1)
	}
	if other, err := st.SyncCursorGet(ctx, "matrix:@other:example.org"); err != nil || other.Cursor != "s1" {
		t.Fatalf("the other name's cursor = %+v, %v; want s1 (a save touches one name)", other, err)
	}
	if err := st.SyncCursorSave(ctx, &store.SyncCursorSaveParams{Name: name, Now: t1}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("saving an empty cursor: err %v, want ErrInvalid", err)
	}
}
