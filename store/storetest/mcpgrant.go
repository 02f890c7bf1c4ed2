package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// ---- MCP OAuth grants ----

func (s suite) mcpGrantTests() []namedTest {
	return []namedTest{
		{"PutGetList", s.testMCPGrantPutGet},
		{"CreateOnlyWhenNone", s.testMCPGrantCreate},
		{"SwapCompareAndSwap", s.testMCPGrantSwap},
		{"ConcurrentSwapsOneWins", s.testMCPGrantConcurrentSwap},
	}
}

func (s suite) testMCPGrantPutGet(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	k := store.MCPGrantKey{Server: "tracker"}
	_, err := st.MCPGrantGet(ctx, &k)
	errIs(t, err, store.ErrNotFound, "reading a grant never stored")

	first := clk.Now()
	got, err := st.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: k, SealedGrant: "v1:k1:G1", Now: first})
	noErr(t, err, "storing a grant")
	want := store.MCPGrant{MCPGrantKey: k, SealedGrant: "v1:k1:G1", Version: 1, CreatedAt: first, UpdatedAt: first}
	deepEq(t, normGrant(got), want, "the stored grant")
	read, err := st.MCPGrantGet(ctx, &k)
	noErr(t, err, "reading it")
	deepEq(t, normGrant(read), want, "the grant read")

	// A new authorization replaces it; the version goes on counting.
	later := clk.Advance(time.Hour)
	got, err = st.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: k, SealedGrant: "v1:k1:G2", Now: later})
	noErr(t, err, "storing a new authorization")
	deepEq(t, normGrant(got), store.MCPGrant{MCPGrantKey: k, SealedGrant: "v1:k1:G2", Version: 2, CreatedAt: first, UpdatedAt: later}, "the replaced grant")

	// The same server in a workspace is another grant.
	kw := store.MCPGrantKey{Server: "tracker", Workspace: "T123"}
	_, err = st.MCPGrantGet(ctx, &kw)
	errIs(t, err, store.ErrNotFound, "the workspace's grant before it is stored")
	_, err = st.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: kw, SealedGrant: "v1:k1:W1", Now: later})
	noErr(t, err, "storing the workspace's grant")
	all, err := st.MCPGrantList(ctx)
	noErr(t, err, "listing grants")
	eq(t, len(all), 2, "grants listed")
	eq(t, all[0].MCPGrantKey, k, "first listed")
	eq(t, all[1].MCPGrantKey, kw, "second listed")
	eq(t, all[1].SealedGrant, "v1:k1:W1", "the workspace's grant")

	_, err = st.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: k, SealedGrant: `{"access_token":"clear"}`})
	errIs(t, err, store.ErrInvalid, "storing a clear-text grant")
	_, err = st.MCPGrantPut(ctx, &store.MCPGrantPutParams{SealedGrant: "v1:k1:X"})
	errIs(t, err, store.ErrInvalid, "storing a grant without a server")

	noErr(t, st.MCPGrantDelete(ctx, &kw), "removing the workspace's grant")
	errIs(t, st.MCPGrantDelete(ctx, &kw), store.ErrNotFound, "removing it twice")
	_, err = st.MCPGrantGet(ctx, &k)
	noErr(t, err, "the other grant stays")
}

func (s suite) testMCPGrantCreate(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	k := store.MCPGrantKey{Server: "files"}
	got, err := st.MCPGrantCreate(ctx, &store.MCPGrantPutParams{MCPGrantKey: k, SealedGrant: "v1:k1:IMPORTED"})
	noErr(t, err, "creating a grant where there is none")
	eq(t, got.Version, int64(1), "version of a created grant")
	_, err = st.MCPGrantCreate(ctx, &store.MCPGrantPutParams{MCPGrantKey: k, SealedGrant: "v1:k1:AGAIN"})
	errIs(t, err, store.ErrConflict, "creating a grant where there is one")
	read, err := st.MCPGrantGet(ctx, &k)
	noErr(t, err, "reading after the refused create")
	eq(t, read.SealedGrant, "v1:k1:IMPORTED", "the grant a refused create leaves")
}

func (s suite) testMCPGrantSwap(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	k := store.MCPGrantKey{Server: "tracker", Workspace: "G1"}
	g, err := st.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: k, SealedGrant: "v1:k1:OLD", Now: clk.Now()})
	noErr(t, err, "storing a grant")

	later := clk.Advance(time.Minute)
	got, err := st.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: k, Expect: g.Version, SealedGrant: "v1:k1:NEW", Now: later})
	noErr(t, err, "refreshing at the version read")
	eq(t, got.Version, g.Version+1, "version after a refresh")
	eq(t, got.SealedGrant, "v1:k1:NEW", "grant after a refresh")
	timeEq(t, got.UpdatedAt, later, "UpdatedAt after a refresh")

	// A second refresh that read the old version loses: the newer grant stays.
	_, err = st.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: k, Expect: g.Version, SealedGrant: "v1:k1:STALE"})
	errIs(t, err, store.ErrConflict, "refreshing from a version replaced meanwhile")
	read, err := st.MCPGrantGet(ctx, &k)
	noErr(t, err, "reading after the lost refresh")
	eq(t, read.SealedGrant, "v1:k1:NEW", "grant after the lost refresh")

	_, err = st.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: k, Expect: read.Version, SealedGrant: "clear"})
	errIs(t, err, store.ErrInvalid, "refreshing to a clear-text grant")
	_, err = st.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: k, SealedGrant: "v1:k1:X"})
	errIs(t, err, store.ErrInvalid, "refreshing without the version read")
	_, err = st.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: store.MCPGrantKey{Server: "nobody"}, Expect: 1, SealedGrant: "v1:k1:X"})
	errIs(t, err, store.ErrNotFound, "refreshing an unknown grant")
}

// testMCPGrantConcurrentSwap: instances refreshing the same grant at once,
// each from the version it read, end with exactly one winner; the others
// get ErrConflict and read the winner's grant.
func (s suite) testMCPGrantConcurrentSwap(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	k := store.MCPGrantKey{Server: "shared"}
	g, err := st.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: k, SealedGrant: "v1:k1:START"})
	noErr(t, err, "storing a grant")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	wins := make([]*store.MCPGrant, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wins[i], errs[i] = st.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: k, Expect: g.Version, SealedGrant: "v1:k1:R" + string(rune('a'+i))})
		}()
	}
	wg.Wait()
	var winner *store.MCPGrant
	for i, err := range errs {
		if err == nil {
			isTrue(t, winner == nil, "a second refresh from version %d won", g.Version)
			winner = wins[i]
			continue
		}
		errIs(t, err, store.ErrConflict, "refresh %d that lost", i)
	}
	isTrue(t, winner != nil, "no refresh won")
	read, err := st.MCPGrantGet(ctx, &k)
	noErr(t, err, "reading after the race")
	eq(t, read.SealedGrant, winner.SealedGrant, "the grant stored is the winner's")
	eq(t, read.Version, g.Version+1, "one refresh took effect")
}

// normGrant drops the times' monotonic readings and zones for comparison.
func normGrant(g *store.MCPGrant) store.MCPGrant {
	c := *g
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC().Round(0), c.UpdatedAt.UTC().Round(0)
	return c
}
