package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// ---- connections ----

func (s suite) connectionTests() []namedTest {
	return []namedTest{
		{"SaveFindReplace", s.testConnectionSaveFindReplace},
		{"OwnersApart", s.testConnectionOwnersApart},
		{"ClearTextRefused", s.testConnectionClearText},
		{"SetTokensCompareAndSwap", s.testConnectionSetTokens},
		{"ListAndDelete", s.testConnectionListDelete},
	}
}

func saveConnection(t testing.TB, st store.Queries, p store.ConnectionProvider, o store.ConnectionOwner, access string, now time.Time) *store.Connection {
	t.Helper()
	c, err := st.ConnectionSave(ctxFor(t), &store.ConnectionSaveParams{
		Provider: p, Owner: o, Account: "octo", AccessToken: access, ConnectedBy: uuid.New(), Now: now,
	})
	noErr(t, err, "connecting %s for %s", p, o)
	return c
}

func (s suite) testConnectionSaveFindReplace(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	person, by := uuid.New(), uuid.New()
	owner := store.PersonOwner(person)
	_, err := st.ConnectionFind(ctx, &store.ConnectionFindParams{Provider: store.ProviderGitHub, Owner: owner})
	errIs(t, err, store.ErrNotFound, "finding a connection never made")

	first := clk.Now()
	exp := first.Add(time.Hour)
	got, err := st.ConnectionSave(ctx, &store.ConnectionSaveParams{
		Provider: store.ProviderGitHub, Owner: owner, Account: "octocat", AccountID: "583231", Scopes: []string{"repo", "read:user"},
		AccessToken: "v1:k1:ACCESS", RefreshToken: "v1:k1:REFRESH", TokenType: "bearer", Expiry: &exp, ConnectedBy: by, Now: first,
	})
	noErr(t, err, "connecting github")
	isTrue(t, got.ID != uuid.Nil, "a new connection gets an id")
	want := store.Connection{
		ID: got.ID, Provider: store.ProviderGitHub, Owner: owner, Account: "octocat", AccountID: "583231", Scopes: []string{"repo", "read:user"},
		AccessToken: "v1:k1:ACCESS", RefreshToken: "v1:k1:REFRESH", TokenType: "bearer", ConnectedBy: by, CreatedAt: first, UpdatedAt: first,
	}
	timePtrEq(t, got.Expiry, exp, "Expiry")
	got.Expiry = nil
	deepEq(t, *got, want, "the saved connection")
	read, err := st.ConnectionFind(ctx, &store.ConnectionFindParams{Provider: store.ProviderGitHub, Owner: owner})
	noErr(t, err, "finding it")
	read.Expiry = nil
	deepEq(t, *read, want, "the connection found")
	byID, err := st.ConnectionGet(ctx, got.ID)
	noErr(t, err, "reading it by id")
	eq(t, byID.Account, "octocat", "account read by id")

	// A reconnect replaces the account and tokens, keeps the id and the
	// first connection's time; no expiry and no refresh token are kept as
	// none.
	later := clk.Advance(time.Hour)
	again, err := st.ConnectionSave(ctx, &store.ConnectionSaveParams{
		Provider: store.ProviderGitHub, Owner: owner, Account: "hubot", AccessToken: "v1:k1:NEW", ConnectedBy: by, Now: later,
	})
	noErr(t, err, "reconnecting github")
	eq(t, again.ID, got.ID, "id after a reconnect")
	eq(t, again.Account, "hubot", "account after a reconnect")
	eq(t, again.RefreshToken, "", "refresh token after a reconnect without one")
	isTrue(t, again.Expiry == nil, "expiry after a reconnect without one: want nil, got %v", again.Expiry)
	deepEq(t, again.Scopes, []string{}, "scopes after a reconnect without any")
	timeEq(t, again.CreatedAt, first, "CreatedAt after a reconnect")
	timeEq(t, again.UpdatedAt, later, "UpdatedAt after a reconnect")
	_, err = st.ConnectionGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "reading an unknown connection")
}

func (s suite) testConnectionOwnersApart(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	now := newClock().Now()
	id := uuid.New()
	// The same id as a person and as a workspace, and two providers: four
	// connections, none replacing another.
	a := saveConnection(t, st, store.ProviderGitHub, store.PersonOwner(id), "v1:k1:A", now)
	b := saveConnection(t, st, store.ProviderGitHub, store.WorkspaceOwner(id), "v1:k1:B", now)
	c := saveConnection(t, st, store.ProviderGoogle, store.PersonOwner(id), "v1:k1:C", now)
	d := saveConnection(t, st, store.ProviderGoogle, store.WorkspaceOwner(id), "v1:k1:D", now)
	seen := map[uuid.UUID]bool{a.ID: true, b.ID: true, c.ID: true, d.ID: true}
	eq(t, len(seen), 4, "distinct connections for two providers and two owner kinds")
	for _, want := range []*store.Connection{a, b, c, d} {
		got, err := st.ConnectionFind(ctx, &store.ConnectionFindParams{Provider: want.Provider, Owner: want.Owner})
		noErr(t, err, "finding the %s connection of %s", want.Provider, want.Owner)
		eq(t, got.AccessToken, want.AccessToken, "token of the %s connection of %s", want.Provider, want.Owner)
		deepEq(t, got.Owner, want.Owner, "owner of the %s connection of %s", want.Provider, want.Owner)
	}
}

func (s suite) testConnectionClearText(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	owner := store.PersonOwner(uuid.New())
	bad := []store.ConnectionSaveParams{
		{Provider: store.ProviderGitHub, Owner: owner, Account: "a", AccessToken: "gho_cleartext", ConnectedBy: uuid.New()},
		{Provider: store.ProviderGitHub, Owner: owner, Account: "a", AccessToken: "v1:k1:X", RefreshToken: "ghr_cleartext", ConnectedBy: uuid.New()},
		{Provider: store.ProviderGitHub, Owner: owner, Account: "a", AccessToken: "", ConnectedBy: uuid.New()},
		{Provider: "gitlab", Owner: owner, Account: "a", AccessToken: "v1:k1:X", ConnectedBy: uuid.New()},
		{Provider: store.ProviderGitHub, Owner: store.ConnectionOwner{}, Account: "a", AccessToken: "v1:k1:X", ConnectedBy: uuid.New()},
		{Provider: store.ProviderGitHub, Owner: store.ConnectionOwner{PersonID: ptr(uuid.New()), WorkspaceID: ptr(uuid.New())}, Account: "a", AccessToken: "v1:k1:X", ConnectedBy: uuid.New()},
		{Provider: store.ProviderGitHub, Owner: owner, Account: "", AccessToken: "v1:k1:X", ConnectedBy: uuid.New()},
		{Provider: store.ProviderGitHub, Owner: owner, Account: "a", AccessToken: "v1:k1:X"},
	}
	for i, p := range bad {
		_, err := st.ConnectionSave(ctx, &p)
		errIs(t, err, store.ErrInvalid, "saving bad connection %d", i)
	}
	_, err := st.ConnectionFind(ctx, &store.ConnectionFindParams{Provider: store.ProviderGitHub, Owner: owner})
	errIs(t, err, store.ErrNotFound, "finding the connection after every save was refused")
}

func (s suite) testConnectionSetTokens(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := saveConnection(t, st, store.ProviderGoogle, store.PersonOwner(uuid.New()), "v1:k1:OLD", clk.Now())

	later := clk.Advance(time.Hour)
	exp := later.Add(time.Hour)
	got, err := st.ConnectionSetTokens(ctx, &store.ConnectionTokenParams{
		ID: c.ID, Expect: "v1:k1:OLD", AccessToken: "v1:k1:NEW", RefreshToken: "v1:k1:R2", Expiry: &exp, Now: later,
	})
	noErr(t, err, "refreshing the tokens")
	eq(t, got.AccessToken, "v1:k1:NEW", "access token after a refresh")
	eq(t, got.RefreshToken, "v1:k1:R2", "refresh token after a refresh")
	timePtrEq(t, got.Expiry, exp, "expiry after a refresh")
	timeEq(t, got.UpdatedAt, later, "UpdatedAt after a refresh")

	// A second refresh that read the old token loses: the newer one stays.
	_, err = st.ConnectionSetTokens(ctx, &store.ConnectionTokenParams{ID: c.ID, Expect: "v1:k1:OLD", AccessToken: "v1:k1:STALE", Now: later})
	errIs(t, err, store.ErrConflict, "refreshing from a token replaced meanwhile")
	read, err := st.ConnectionGet(ctx, c.ID)
	noErr(t, err, "reading after the lost refresh")
	eq(t, read.AccessToken, "v1:k1:NEW", "access token after the lost refresh")

	_, err = st.ConnectionSetTokens(ctx, &store.ConnectionTokenParams{ID: c.ID, Expect: "v1:k1:NEW", AccessToken: "clear"})
	errIs(t, err, store.ErrInvalid, "refreshing to a clear-text token")
	_, err = st.ConnectionSetTokens(ctx, &store.ConnectionTokenParams{ID: uuid.New(), Expect: "v1:k1:NEW", AccessToken: "v1:k1:X"})
	errIs(t, err, store.ErrNotFound, "refreshing an unknown connection")
}

func (s suite) testConnectionListDelete(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	now := newClock().Now()
	alice, team := uuid.New(), uuid.New()
	a := saveConnection(t, st, store.ProviderGitHub, store.PersonOwner(alice), "v1:k1:A", now)
	b := saveConnection(t, st, store.ProviderGoogle, store.PersonOwner(alice), "v1:k1:B", now)
	w := saveConnection(t, st, store.ProviderGitHub, store.WorkspaceOwner(team), "v1:k1:W", now)

	mine, err := st.ConnectionList(ctx, &store.ConnectionListParams{Owner: ptr(store.PersonOwner(alice))})
	noErr(t, err, "listing alice's connections")
	isTrue(t, len(mine) == 2 && mine[0].ID == a.ID && mine[1].ID == b.ID, "alice's connections: want her two in id order, got %d", len(mine))
	theirs, err := st.ConnectionList(ctx, &store.ConnectionListParams{Owner: ptr(store.WorkspaceOwner(team))})
	noErr(t, err, "listing the workspace's connections")
	isTrue(t, len(theirs) == 1 && theirs[0].ID == w.ID, "the workspace's connections: want its one, got %d", len(theirs))
	page, err := st.ConnectionList(ctx, &store.ConnectionListParams{Limit: 2})
	noErr(t, err, "listing the first page of all")
	eq(t, len(page), 2, "first page of 2")
	rest, err := st.ConnectionList(ctx, &store.ConnectionListParams{AfterID: page[1].ID})
	noErr(t, err, "listing the rest")
	eq(t, len(rest), 1, "the rest after a page of 2")

	noErr(t, st.ConnectionDelete(ctx, a.ID), "disconnecting alice's github")
	errIs(t, st.ConnectionDelete(ctx, a.ID), store.ErrNotFound, "disconnecting it twice")
	_, err = st.ConnectionFind(ctx, &store.ConnectionFindParams{Provider: store.ProviderGitHub, Owner: store.PersonOwner(alice)})
	errIs(t, err, store.ErrNotFound, "finding a deleted connection")
	_, err = st.ConnectionFind(ctx, &store.ConnectionFindParams{Provider: store.ProviderGitHub, Owner: store.WorkspaceOwner(team)})
	noErr(t, err, "the workspace's github connection stays")
}
