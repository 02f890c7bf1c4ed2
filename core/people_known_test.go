package core_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// findCounter counts the store's person lookups.
type findCounter struct {
	store.Store
	finds atomic.Int32
}

func (c *findCounter) PersonFind(ctx context.Context, p *store.PersonFindParams) (*store.Person, error) {
	c.finds.Add(1)
	return c.Store.PersonFind(ctx, p)
}

// TestEnsureKnownSkipsTheStoreOnceFound: the first message of a user makes
// their person; later ones (the acknowledgement path) read nothing, and the
// person is still the one.
func TestEnsureKnownSkipsTheStoreOnceFound(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := &findCounter{Store: open(t)}
		d, err := core.NewDirectory(core.DirectoryOptions{Store: st, Logger: testenv.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if err := d.EnsureKnown(ctx, "slack", "T1", "U1", "Ana"); err != nil {
			t.Fatal(err)
		}
		first := st.finds.Load()
		if first == 0 {
			t.Fatal("the first sight of a user did not look for their person")
		}
		for range 5 {
			if err := d.EnsureKnown(ctx, "slack", "T1", "U1", "Ana"); err != nil {
				t.Fatal(err)
			}
		}
		if n := st.finds.Load(); n != first {
			t.Errorf("%d person lookups after five more messages of a known user, want none", n-first)
		}
		p, err := st.Store.PersonFind(ctx, &store.PersonFindParams{Identity: store.Identity{Platform: "slack", Workspace: "T1", UserID: "U1"}})
		if err != nil {
			t.Fatalf("the person behind U1: %v", err)
		}
		if p.DisplayName != "Ana" {
			t.Errorf("display name %q, want Ana", p.DisplayName)
		}
		// Another user of the same team is looked up.
		if err := d.EnsureKnown(ctx, "slack", "T1", "U2", "Bo"); err != nil {
			t.Fatal(err)
		}
		if st.finds.Load() == first {
			t.Error("a user seen for the first time was not looked up")
		}
	})
}
