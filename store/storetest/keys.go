package storetest

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// ---- API credentials ----

func (s suite) keyTests() []namedTest {
	return []namedTest{
		{"CreateFindRoundTrip", s.testKeyRoundTrip},
		{"Invalid", s.testKeyInvalid},
		{"LookupUnique", s.testKeyLookupUnique},
		{"RevokeTakesSessions", s.testKeyRevoke},
		{"ListAndPrune", s.testKeyListPrune},
	}
}

func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func (s suite) testKeyRoundTrip(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	person := uuid.New()
	ws := []uuid.UUID{uuid.New(), uuid.New()}
	expires := clk.Now().Add(time.Hour)
	made, err := st.KeyCreate(ctx, &store.KeyCreateParams{
		Kind: store.KeyPersonal, Lookup: "p1", SecretHash: hashOf("secret"), PersonID: &person,
		Workspaces: ws, Label: "laptop", ExpiresAt: &expires, Now: clk.Now(),
	})
	noErr(t, err, "creating a personal token")
	got, err := st.KeyFind(ctx, "p1")
	noErr(t, err, "finding it by lookup")
	eq(t, got.ID, made.ID, "id found by lookup")
	eq(t, got.Kind, store.KeyPersonal, "kind")
	eq(t, string(got.SecretHash), string(hashOf("secret")), "secret hash")
	uuidPtrEq(t, got.PersonID, person, "person")
	deepEq(t, got.Workspaces, ws, "workspaces in order")
	eq(t, len(got.Agents), 0, "agents of a personal token")
	eq(t, got.Label, "laptop", "label")
	timeEq(t, got.CreatedAt, clk.Now(), "created at")
	timePtrEq(t, got.ExpiresAt, expires, "expires at")
	isTrue(t, got.RevokedAt == nil && got.ParentID == nil, "a new token is live and has no parent")
	isTrue(t, got.Usable(clk.Now()) && !got.Usable(expires), "usable before its expiry, not at it")

	byID, err := st.KeyGet(ctx, made.ID)
	noErr(t, err, "getting it by id")
	eq(t, byID.Lookup, "p1", "lookup of the key got by id")

	// A personal token with no workspace list reaches every workspace its
	// person belongs to (the roles decide); it reads back with an empty one.
	_, err = st.KeyCreate(ctx, &store.KeyCreateParams{
		Kind: store.KeyPersonal, Lookup: "p2", SecretHash: hashOf("other"), PersonID: &person, Now: clk.Now(),
	})
	noErr(t, err, "creating a personal token for all of a person's workspaces")
	all, err := st.KeyFind(ctx, "p2")
	noErr(t, err, "finding the unscoped token")
	eq(t, len(all.Workspaces), 0, "workspaces of an unscoped personal token")

	_, err = st.KeyFind(ctx, "nope")
	errIs(t, err, store.ErrNotFound, "finding an unknown lookup")
	_, err = st.KeyGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "getting an unknown id")
}

func (s suite) testKeyInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	parent := uuid.New()
	soon := time.Now().Add(time.Minute)
	cases := []struct {
		name string
		p    store.KeyCreateParams
	}{
		{"unknown kind", store.KeyCreateParams{Kind: "robot", Lookup: "a", SecretHash: hashOf("x"), Agents: []string{"a"}}},
		{"no lookup", store.KeyCreateParams{Kind: store.KeyAgent, SecretHash: hashOf("x"), Agents: []string{"a"}}},
		{"short hash", store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "a", SecretHash: []byte("x"), Agents: []string{"a"}}},
		{"agent key without agent", store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "a", SecretHash: hashOf("x")}},
		{"agent key with two agents", store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "a", SecretHash: hashOf("x"), Agents: []string{"a", "b"}}},
		{"host token without agents", store.KeyCreateParams{Kind: store.KeyHost, Lookup: "a", SecretHash: hashOf("x")}},
		{"personal without person", store.KeyCreateParams{Kind: store.KeyPersonal, Lookup: "a", SecretHash: hashOf("x"), Workspaces: []uuid.UUID{uuid.New()}}},
		{"session without parent", store.KeyCreateParams{Kind: store.KeySession, Lookup: "a", SecretHash: hashOf("x"), Agents: []string{"a"}, ExpiresAt: &soon}},
		{"session without expiry", store.KeyCreateParams{Kind: store.KeySession, Lookup: "a", SecretHash: hashOf("x"), Agents: []string{"a"}, ParentID: &parent}},
		{"agent key with parent", store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "a", SecretHash: hashOf("x"), Agents: []string{"a"}, ParentID: &parent}},
	}
	for _, tc := range cases {
		_, err := st.KeyCreate(ctx, &tc.p)
		errIs(t, err, store.ErrInvalid, "creating a key with %s", tc.name)
	}
	_, err := st.KeyList(ctx, &store.KeyListParams{Kind: store.KeySession})
	errIs(t, err, store.ErrInvalid, "listing sessions")
}

func (s suite) testKeyLookupUnique(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	p := &store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "same", SecretHash: hashOf("one"), Agents: []string{"atlas"}}
	_, err := st.KeyCreate(ctx, p)
	noErr(t, err, "creating the first key")
	p.SecretHash = hashOf("two")
	_, err = st.KeyCreate(ctx, p)
	errIs(t, err, store.ErrConflict, "creating a second key with the same lookup")
}

func (s suite) testKeyRevoke(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	key, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "k", SecretHash: hashOf("k"), Agents: []string{"atlas"}, Now: clk.Now()})
	noErr(t, err, "creating an agent key")
	other, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyHost, Lookup: "h", SecretHash: hashOf("h"), Agents: []string{"atlas", "scout"}, Now: clk.Now()})
	noErr(t, err, "creating a host token")
	exp := clk.Now().Add(15 * time.Minute)
	sess, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeySession, Lookup: "s", SecretHash: hashOf("s"), Agents: []string{"atlas"}, ParentID: &key.ID, ExpiresAt: &exp, Now: clk.Now()})
	noErr(t, err, "creating a session of the key")
	uuidPtrEq(t, sess.ParentID, key.ID, "session's parent")
	hostSess, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeySession, Lookup: "hs", SecretHash: hashOf("hs"), Agents: []string{"scout"}, ParentID: &other.ID, ExpiresAt: &exp, Now: clk.Now()})
	noErr(t, err, "creating a session of the host token")

	first := clk.Advance(time.Minute)
	got, err := st.KeyRevoke(ctx, &store.KeyRevokeParams{ID: key.ID, Now: first})
	noErr(t, err, "revoking the key")
	eq(t, got.ID, key.ID, "the revoke returns the key itself")
	timePtrEq(t, got.RevokedAt, first, "revoked at")
	s1, err := st.KeyGet(ctx, sess.ID)
	noErr(t, err, "reading the session")
	timePtrEq(t, s1.RevokedAt, first, "the key's session is revoked with it")
	h1, err := st.KeyGet(ctx, hostSess.ID)
	noErr(t, err, "reading the other session")
	isTrue(t, h1.RevokedAt == nil, "another token's session stays live")

	got, err = st.KeyRevoke(ctx, &store.KeyRevokeParams{ID: key.ID, Now: clk.Advance(time.Minute)})
	noErr(t, err, "revoking again")
	timePtrEq(t, got.RevokedAt, first, "a second revoke keeps the first time")

	_, err = st.KeyRevoke(ctx, &store.KeyRevokeParams{ID: uuid.New(), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "revoking an unknown key")
}

func (s suite) testKeyListPrune(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	person := uuid.New()
	agent, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "a", SecretHash: hashOf("a"), Agents: []string{"atlas"}, Now: clk.Now()})
	noErr(t, err, "creating an agent key")
	pat, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyPersonal, Lookup: "p", SecretHash: hashOf("p"), PersonID: &person, Workspaces: []uuid.UUID{uuid.New()}, Now: clk.Advance(time.Second)})
	noErr(t, err, "creating a personal token")
	gone, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyHost, Lookup: "h", SecretHash: hashOf("h"), Agents: []string{"atlas"}, Now: clk.Advance(time.Second)})
	noErr(t, err, "creating a host token")
	_, err = st.KeyRevoke(ctx, &store.KeyRevokeParams{ID: gone.ID, Now: clk.Now()})
	noErr(t, err, "revoking the host token")
	old := clk.Now().Add(time.Minute)
	late := clk.Now().Add(time.Hour)
	for i, exp := range []*time.Time{&old, &old, &late} {
		_, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeySession, Lookup: "s" + string(rune('0'+i)), SecretHash: hashOf("s"), Agents: []string{"atlas"}, ParentID: &agent.ID, ExpiresAt: exp, Now: clk.Now()})
		noErr(t, err, "creating session %d", i)
	}

	ids := func(ks []*store.Key) []uuid.UUID {
		out := []uuid.UUID{}
		for _, k := range ks {
			out = append(out, k.ID)
		}
		return out
	}
	live, err := st.KeyList(ctx, nil)
	noErr(t, err, "listing live keys")
	deepEq(t, ids(live), []uuid.UUID{agent.ID, pat.ID}, "live keys, oldest first, no sessions")
	all, err := st.KeyList(ctx, &store.KeyListParams{IncludeRevoked: true})
	noErr(t, err, "listing every key")
	deepEq(t, ids(all), []uuid.UUID{agent.ID, pat.ID, gone.ID}, "every key with the revoked one")
	personal, err := st.KeyList(ctx, &store.KeyListParams{Kind: store.KeyPersonal})
	noErr(t, err, "listing personal tokens")
	deepEq(t, ids(personal), []uuid.UUID{pat.ID}, "personal tokens only")

	n, err := st.KeyPruneSessions(ctx, &store.PruneParams{Before: old.Add(time.Second)})
	noErr(t, err, "pruning expired sessions")
	eq(t, n, 2, "sessions pruned (the two expired ones)")
	_, err = st.KeyFind(ctx, "s2")
	noErr(t, err, "the live session is kept")
	_, err = st.KeyFind(ctx, "a")
	noErr(t, err, "a key with no expiry is never pruned")
}
