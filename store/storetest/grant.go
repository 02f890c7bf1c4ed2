package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) grantTests() []namedTest {
	return []namedTest{
		{"CreateFind", s.testGrantCreateFind},
		{"LimitedToArguments", s.testGrantArgs},
		{"Revoke", s.testGrantRevoke},
		{"List", s.testGrantList},
		{"Invalid", s.testGrantInvalid},
		{"ByWorkspaceID", s.testGrantByWorkspaceID},
	}
}

var (
	hashA = strings.Repeat("a", 64)
	hashB = strings.Repeat("b", 64)
)

func createGrant(t testing.TB, st store.Queries, p store.GrantCreateParams) *store.Grant {
	t.Helper()
	g, err := st.GrantCreate(ctxFor(t), &p)
	noErr(t, err, "creating grant of %s to %s", p.Tool, p.Agent)
	return g
}

func (s suite) testGrantCreateFind(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	t0 := newClock().Now()
	g := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "send_email", Workspace: "T1", GrantedBy: "U1", Now: t0})
	eq(t, g.ID != uuid.Nil, true, "grant has an id")
	eq(t, g.CreatedAt, t0, "created_at")
	eq(t, g.RevokedAt == nil, true, "a new grant is not revoked")

	got, err := st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", Workspace: "T1", ArgsHash: hashA})
	noErr(t, err, "finding an unlimited grant for any arguments")
	eq(t, got.ID, g.ID, "found grant")
	eq(t, got.GrantedBy, "U1", "granted_by")

	for _, miss := range []store.GrantFindParams{
		{Agent: "scout", Tool: "send_email", Workspace: "T1"},
		{Agent: "atlas", Tool: "delete_file", Workspace: "T1"},
		{Agent: "atlas", Tool: "send_email", Workspace: "T2"},
		{Agent: "atlas", Tool: "send_email", Workspace: ""},
	} {
		_, err := st.GrantFind(ctx, &miss)
		errIs(t, err, store.ErrNotFound, "finding a grant for %+v", miss)
	}
	byID, err := st.GrantGet(ctx, g.ID)
	noErr(t, err, "getting grant")
	eq(t, byID.Workspace, "T1", "workspace")
	_, err = st.GrantGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "getting an unknown grant")
}

func (s suite) testGrantArgs(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	g := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "send_email", Workspace: "T1", ArgsHash: hashA, GrantedBy: "U1"})
	got, err := st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", Workspace: "T1", ArgsHash: hashA})
	noErr(t, err, "finding a grant limited to the same arguments")
	eq(t, got.ID, g.ID, "found grant")
	eq(t, got.ArgsHash, hashA, "args_hash")
	_, err = st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", Workspace: "T1", ArgsHash: hashB})
	errIs(t, err, store.ErrNotFound, "finding a grant limited to other arguments")
}

func (s suite) testGrantRevoke(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	g := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "send_email", Workspace: "T1", GrantedBy: "U1", Now: clk.Now()})
	t1 := clk.Advance(time.Minute)
	r, err := st.GrantRevoke(ctx, &store.GrantRevokeParams{ID: g.ID, Now: t1})
	noErr(t, err, "revoking grant")
	if r.RevokedAt == nil || !r.RevokedAt.Equal(t1) {
		t.Fatalf("revoked_at = %v, want %v", r.RevokedAt, t1)
	}
	_, err = st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", Workspace: "T1"})
	errIs(t, err, store.ErrNotFound, "finding a revoked grant")
	again, err := st.GrantRevoke(ctx, &store.GrantRevokeParams{ID: g.ID, Now: clk.Advance(time.Minute)})
	noErr(t, err, "revoking a grant twice")
	eq(t, again.RevokedAt.Equal(t1), true, "a second revoke keeps the first time")
	_, err = st.GrantRevoke(ctx, &store.GrantRevokeParams{ID: uuid.New()})
	errIs(t, err, store.ErrNotFound, "revoking an unknown grant")
}

func (s suite) testGrantList(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "t1", Workspace: "T1", GrantedBy: "U1", Now: clk.Now()})
	b := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "t2", Workspace: "T2", GrantedBy: "U1", Now: clk.Advance(time.Second)})
	c := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "t3", Workspace: "T1", GrantedBy: "U1", Now: clk.Advance(time.Second)})
	_, err := st.GrantRevoke(ctx, &store.GrantRevokeParams{ID: c.ID, Now: clk.Advance(time.Second)})
	noErr(t, err, "revoking")

	ids := func(gs []*store.Grant) []uuid.UUID {
		out := make([]uuid.UUID, len(gs))
		for i, g := range gs {
			out[i] = g.ID
		}
		return out
	}
	same := func(got, want []uuid.UUID, what string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: got %v, want %v", what, got, want)
			}
		}
	}
	live, err := st.GrantList(ctx, &store.GrantListParams{})
	noErr(t, err, "listing live grants")
	same(ids(live), []uuid.UUID{b.ID, a.ID}, "live grants, newest first")
	all, err := st.GrantList(ctx, &store.GrantListParams{Revoked: true})
	noErr(t, err, "listing every grant")
	same(ids(all), []uuid.UUID{c.ID, b.ID, a.ID}, "every grant, newest first")
	ws := "T1"
	inT1, err := st.GrantList(ctx, &store.GrantListParams{Workspace: &ws, Revoked: true})
	noErr(t, err, "listing T1's grants")
	same(ids(inT1), []uuid.UUID{c.ID, a.ID}, "T1's grants")
	one, err := st.GrantList(ctx, &store.GrantListParams{Revoked: true, Limit: 1})
	noErr(t, err, "listing one grant")
	same(ids(one), []uuid.UUID{c.ID}, "the newest grant")
}

func (s suite) testGrantInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	for _, p := range []store.GrantCreateParams{
		{Tool: "t", GrantedBy: "U1"},
		{Agent: "a", GrantedBy: "U1"},
		{Agent: "a", Tool: "t"},
		{Agent: "a", Tool: "t", GrantedBy: "U1", ArgsHash: "not-a-hash"},
	} {
		_, err := st.GrantCreate(ctx, &p)
		errIs(t, err, store.ErrInvalid, "creating grant %+v", p)
	}
	_, err := st.GrantFind(ctx, &store.GrantFindParams{Agent: "a"})
	errIs(t, err, store.ErrInvalid, "finding a grant without a tool")
}

// testGrantByWorkspaceID: a grant made in a conversation of a workspace
// holds in that workspace only, whatever the platform workspace string; one
// of no workspace holds by the string, and only where there is no workspace.
// GrantList filters by the id and names the workspace.
func (s suite) testGrantByWorkspaceID(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	wsA := newTeam(t, st, clk, "Team A", uuid.New())
	wsB := newTeam(t, st, clk, "Team B", uuid.New())
	inA := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "send_email", Workspace: "TA", WorkspaceID: &wsA.ID, GrantedBy: "U1", Now: clk.Now()})
	if inA.WorkspaceID == nil || *inA.WorkspaceID != wsA.ID {
		t.Fatalf("grant's workspace id = %v, want %s", inA.WorkspaceID, wsA.ID)
	}
	loose := createGrant(t, st, store.GrantCreateParams{Agent: "atlas", Tool: "send_email", Workspace: "TX", GrantedBy: "U1", Now: clk.Advance(time.Second)})

	got, err := st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", WorkspaceID: &wsA.ID})
	noErr(t, err, "finding the grant of workspace A by its id")
	eq(t, got.ID, inA.ID, "grant found in A")
	got, err = st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", Workspace: "TB", WorkspaceID: &wsA.ID})
	noErr(t, err, "finding A's grant from another team string of A's workspace")
	eq(t, got.ID, inA.ID, "grant found in A whatever the team string")
	for _, miss := range []store.GrantFindParams{
		{Agent: "atlas", Tool: "send_email", Workspace: "TA", WorkspaceID: &wsB.ID}, // A's team string, B's workspace
		{Agent: "atlas", Tool: "send_email", Workspace: "TX", WorkspaceID: &wsB.ID}, // a loose grant's string in a workspace
		{Agent: "atlas", Tool: "send_email", Workspace: "TA"},                       // A's string outside any workspace
	} {
		_, err := st.GrantFind(ctx, &miss)
		errIs(t, err, store.ErrNotFound, "finding a grant for %s in %v", miss.Workspace, miss.WorkspaceID)
	}
	got, err = st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", Workspace: "TX"})
	noErr(t, err, "finding a grant of no workspace by its team string")
	eq(t, got.ID, loose.ID, "the grant of no workspace")

	listed, err := st.GrantList(ctx, &store.GrantListParams{WorkspaceID: &wsA.ID})
	noErr(t, err, "listing A's grants")
	if len(listed) != 1 || listed[0].ID != inA.ID {
		t.Fatalf("A's grants = %v, want only %s", listed, inA.ID)
	}
	eq(t, listed[0].WorkspaceName, "Team A", "the workspace's name in the list")
	all, err := st.GrantList(ctx, &store.GrantListParams{})
	noErr(t, err, "listing every grant")
	eq(t, len(all), 2, "grants listed")
	eq(t, all[0].ID, loose.ID, "newest first")
	eq(t, all[0].WorkspaceName, "", "a grant of no workspace has no name")
	eq(t, all[0].WorkspaceID == nil, true, "a grant of no workspace has no id")
	none, err := st.GrantList(ctx, &store.GrantListParams{WorkspaceID: &wsB.ID})
	noErr(t, err, "listing B's grants")
	eq(t, len(none), 0, "B's grants")
}
