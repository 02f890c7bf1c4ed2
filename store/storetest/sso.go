package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// ---- single sign-on, and the sessions' and tokens' last use ----

func (s suite) ssoTests() []namedTest {
	return []namedTest{
		{"StateUsedOnce", s.testOIDCStateOnce},
		{"StateConcurrentUseOneWins", s.testOIDCStateConcurrent},
		{"Grants", s.testSSOGrants},
		{"SessionsListTouchEnd", s.testSessionsListTouchEnd},
		{"KeysTouchAndByPerson", s.testKeysTouchByPerson},
	}
}

func (s suite) testOIDCStateOnce(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	expires := clk.Now().Add(10 * time.Minute)
	_, err := st.OIDCStateCreate(ctx, &store.OIDCStateCreateParams{
		StateHash: hashOf("state"), Nonce: "n1", CodeVerifier: "v1", ReturnTo: "/console", ExpiresAt: expires, Now: clk.Now(),
	})
	noErr(t, err, "creating a state")
	got, err := st.OIDCStateUse(ctx, &store.OIDCStateUseParams{StateHash: hashOf("state"), Now: clk.Advance(time.Second)})
	noErr(t, err, "using the state")
	eq(t, got.Nonce, "n1", "nonce")
	eq(t, got.CodeVerifier, "v1", "verifier")
	eq(t, got.ReturnTo, "/console", "return to")
	timeEq(t, got.ExpiresAt, expires, "expires at")
	timePtrEq(t, got.UsedAt, clk.Now(), "used at")
	_, err = st.OIDCStateUse(ctx, &store.OIDCStateUseParams{StateHash: hashOf("state"), Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "using the state again (a replay)")
	_, err = st.OIDCStateUse(ctx, &store.OIDCStateUseParams{StateHash: hashOf("other"), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "using an unknown state")
	_, err = st.OIDCStateCreate(ctx, &store.OIDCStateCreateParams{StateHash: hashOf("x"), CodeVerifier: "v", ExpiresAt: expires})
	errIs(t, err, store.ErrInvalid, "a state without a nonce")
	n, err := st.OIDCStatePrune(ctx, &store.PruneParams{Before: expires.Add(time.Second)})
	noErr(t, err, "pruning")
	eq(t, n, 1, "states pruned after their expiry")
}

func (s suite) testOIDCStateConcurrent(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	_, err := st.OIDCStateCreate(ctx, &store.OIDCStateCreateParams{
		StateHash: hashOf("race"), Nonce: "n", CodeVerifier: "v", ExpiresAt: clk.Now().Add(time.Hour), Now: clk.Now(),
	})
	noErr(t, err, "creating a state")
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.OIDCStateUse(ctx, &store.OIDCStateUseParams{StateHash: hashOf("race"), Now: clk.Now()})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				t.Errorf("a concurrent use: %v; want success or ErrConflict", err)
			}
		}()
	}
	wg.Wait()
	eq(t, wins, 1, "callbacks that took the state")
	eq(t, conflicts, n-1, "callbacks refused as replays")
}

func (s suite) testSSOGrants(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	person, ws1, ws2 := uuid.New(), uuid.New(), uuid.New()
	g, err := st.SSOGrantPut(ctx, &store.SSOGrantPutParams{PersonID: person, WorkspaceID: ws1, Role: store.RoleMember, Now: clk.Now()})
	noErr(t, err, "granting member")
	eq(t, g.Role, store.RoleMember, "role")
	_, err = st.SSOGrantPut(ctx, &store.SSOGrantPutParams{PersonID: person, WorkspaceID: ws2, Role: store.RoleAdmin, Now: clk.Now()})
	noErr(t, err, "granting admin")
	g, err = st.SSOGrantPut(ctx, &store.SSOGrantPutParams{PersonID: person, WorkspaceID: ws1, Role: store.RoleAdmin, Now: clk.Advance(time.Minute)})
	noErr(t, err, "changing the role")
	eq(t, g.Role, store.RoleAdmin, "changed role")
	timeEq(t, g.UpdatedAt, clk.Now(), "updated at a change")
	list, err := st.SSOGrantList(ctx, person)
	noErr(t, err, "listing")
	eq(t, len(list), 2, "grants")
	noErr(t, st.SSOGrantDelete(ctx, &store.SSOGrantDeleteParams{PersonID: person, WorkspaceID: ws1}), "deleting")
	noErr(t, st.SSOGrantDelete(ctx, &store.SSOGrantDeleteParams{PersonID: person, WorkspaceID: ws1}), "deleting again")
	list, err = st.SSOGrantList(ctx, person)
	noErr(t, err, "listing after the delete")
	isTrue(t, len(list) == 1 && list[0].WorkspaceID == ws2, "only the other grant is left, got %d", len(list))
	_, err = st.SSOGrantPut(ctx, &store.SSOGrantPutParams{PersonID: person, WorkspaceID: ws1, Role: "boss"})
	errIs(t, err, store.ErrInvalid, "an unknown role")

	// Forgetting a person forgets the roles SSO gave them.
	p, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: store.Identity{Platform: "oidc", Workspace: "https://idp.test", UserID: "sub-1"}, Now: clk.Now()})
	noErr(t, err, "creating a person")
	_, err = st.SSOGrantPut(ctx, &store.SSOGrantPutParams{PersonID: p.ID, WorkspaceID: ws1, Role: store.RoleMember, Now: clk.Now()})
	noErr(t, err, "granting")
	_, err = st.PersonForget(ctx, &store.PersonForgetParams{PersonID: p.ID, By: "operator", Now: clk.Now()})
	noErr(t, err, "forgetting the person")
	list, err = st.SSOGrantList(ctx, p.ID)
	noErr(t, err, "listing after the forget")
	eq(t, len(list), 0, "grants of a forgotten person")
}

func (s suite) testSessionsListTouchEnd(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	alice, bob := uuid.New(), uuid.New()
	open := func(secret string, who *uuid.UUID, method store.LoginMethod) *store.Login {
		l, err := st.LoginCreate(ctx, &store.LoginCreateParams{
			Kind: store.LoginSession, SecretHash: hashOf(secret), PersonID: who, Method: method, IDToken: "idt-" + secret,
			IP: "127.0.0.1", UserAgent: "test/1", ExpiresAt: clk.Now().Add(time.Hour), Now: clk.Now(),
		})
		noErr(t, err, "opening session %s", secret)
		return l
	}
	a1 := open("a1", &alice, store.LoginByOIDC)
	eq(t, a1.Method, store.LoginByOIDC, "method")
	eq(t, a1.IDToken, "idt-a1", "id token")
	timePtrEq(t, a1.LastUsedAt, clk.Now(), "a session's first use is its opening")
	eq(t, a1.LastIP, "127.0.0.1", "ip")
	clk.Advance(time.Second)
	a2 := open("a2", &alice, store.LoginByLink)
	open("b1", &bob, store.LoginByLink)
	op := open("op", nil, store.LoginByToken)
	_, err := st.LoginCreate(ctx, &store.LoginCreateParams{
		Kind: store.LoginLink, SecretHash: hashOf("link"), PersonID: &alice, ExpiresAt: clk.Now().Add(time.Hour), Now: clk.Now(),
	})
	noErr(t, err, "a link, never listed as a session")

	list, err := st.LoginSessions(ctx, &store.LoginSessionsParams{PersonIDs: []uuid.UUID{alice}, Now: clk.Now()})
	noErr(t, err, "listing alice's sessions")
	isTrue(t, len(list) == 2 && list[0].ID == a2.ID && list[1].ID == a1.ID, "alice's two sessions, newest first; got %d", len(list))
	list, err = st.LoginSessions(ctx, &store.LoginSessionsParams{Operator: true, Now: clk.Now()})
	noErr(t, err, "listing the operator's")
	isTrue(t, len(list) == 1 && list[0].ID == op.ID, "the operator's one session; got %d", len(list))
	list, err = st.LoginSessions(ctx, &store.LoginSessionsParams{All: true, Now: clk.Now()})
	noErr(t, err, "listing all")
	eq(t, len(list), 4, "every live session")
	_, err = st.LoginSessions(ctx, &store.LoginSessionsParams{Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "listing without saying whose")

	// A use within Every of the last one writes nothing; after it, or from
	// another address, it does.
	noErr(t, st.LoginTouch(ctx, &store.TouchParams{ID: a1.ID, IP: "127.0.0.1", UserAgent: "test/1", Every: time.Minute, Now: clk.Advance(10 * time.Second)}), "touching")
	got, err := st.LoginGet(ctx, a1.ID)
	noErr(t, err, "reading a1")
	timePtrEq(t, got.LastUsedAt, a1.CreatedAt, "a use 11 s after the last is not written")
	noErr(t, st.LoginTouch(ctx, &store.TouchParams{ID: a1.ID, IP: "::1", UserAgent: "test/1", Every: time.Minute, Now: clk.Now()}), "touching from another address")
	got, _ = st.LoginGet(ctx, a1.ID)
	isTrue(t, got.LastIP == "::1" && got.LastUsedAt.Equal(clk.Now()), "a use from another address is written at once: %s at %v", got.LastIP, got.LastUsedAt)
	noErr(t, st.LoginTouch(ctx, &store.TouchParams{ID: a1.ID, IP: "::1", UserAgent: "test/2", Every: time.Minute, Now: clk.Advance(2 * time.Minute)}), "touching later")
	got, _ = st.LoginGet(ctx, a1.ID)
	isTrue(t, got.LastUserAgent == "test/2" && got.LastUsedAt.Equal(clk.Now()), "a use past Every is written")
	noErr(t, st.LoginTouch(ctx, &store.TouchParams{ID: uuid.New(), Every: time.Minute, Now: clk.Now()}), "touching an unknown row is no error")

	ended, err := st.LoginEnd(ctx, &store.LoginEndParams{ID: a1.ID, Now: clk.Advance(time.Second)})
	noErr(t, err, "ending a1")
	timePtrEq(t, ended.UsedAt, clk.Now(), "ended at")
	again, err := st.LoginEnd(ctx, &store.LoginEndParams{ID: a1.ID, Now: clk.Advance(time.Second)})
	noErr(t, err, "ending a1 again")
	timePtrEq(t, again.UsedAt, ended.UsedAt.UTC(), "the first end's time is kept")
	found, err := st.LoginFind(ctx, hashOf("a1"))
	noErr(t, err, "finding a1 by its secret")
	isTrue(t, !found.Live(clk.Now()), "an ended session is not live")
	_, err = st.LoginEnd(ctx, &store.LoginEndParams{ID: uuid.New(), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "ending an unknown session")
	list, _ = st.LoginSessions(ctx, &store.LoginSessionsParams{PersonIDs: []uuid.UUID{alice, bob}, Now: clk.Now()})
	eq(t, len(list), 2, "alice's other session and bob's stay listed")
	list, _ = st.LoginSessions(ctx, &store.LoginSessionsParams{PersonIDs: []uuid.UUID{alice}, Now: clk.Advance(2 * time.Hour)})
	eq(t, len(list), 0, "expired sessions are not listed")
}

func (s suite) testKeysTouchByPerson(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	alice, bob := uuid.New(), uuid.New()
	mk := func(lookup string, who uuid.UUID) *store.Key {
		k, err := st.KeyCreate(ctx, &store.KeyCreateParams{
			Kind: store.KeyPersonal, Lookup: lookup, SecretHash: hashOf(lookup), PersonID: &who, Workspaces: []uuid.UUID{uuid.New()}, Now: clk.Now(),
		})
		noErr(t, err, "creating %s", lookup)
		return k
	}
	ka := mk("alice1", alice)
	mk("bob1", bob)
	_, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyAgent, Lookup: "agent1", SecretHash: hashOf("agent1"), Agents: []string{"atlas"}, Now: clk.Now()})
	noErr(t, err, "an agent key")
	list, err := st.KeyList(ctx, &store.KeyListParams{PersonIDs: []uuid.UUID{alice}})
	noErr(t, err, "listing alice's tokens")
	isTrue(t, len(list) == 1 && list[0].ID == ka.ID, "alice's one token; got %d", len(list))
	list, _ = st.KeyList(ctx, &store.KeyListParams{})
	eq(t, len(list), 3, "every key without a person filter")
	isTrue(t, ka.LastUsedAt == nil, "a token never used has no last use")
	noErr(t, st.KeyTouch(ctx, &store.TouchParams{ID: ka.ID, IP: "127.0.0.1", UserAgent: "curl/8", Every: time.Minute, Now: clk.Advance(time.Second)}), "touching")
	got, err := st.KeyGet(ctx, ka.ID)
	noErr(t, err, "reading the token")
	timePtrEq(t, got.LastUsedAt, clk.Now(), "last used")
	isTrue(t, got.LastIP == "127.0.0.1" && got.LastUserAgent == "curl/8", "where: %q %q", got.LastIP, got.LastUserAgent)
	first := clk.Now()
	noErr(t, st.KeyTouch(ctx, &store.TouchParams{ID: ka.ID, IP: "127.0.0.1", UserAgent: "curl/8", Every: time.Minute, Now: clk.Advance(30 * time.Second)}), "touching within a minute")
	got, _ = st.KeyGet(ctx, ka.ID)
	timePtrEq(t, got.LastUsedAt, first, "a use within Every writes nothing")
}
