package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// testApprovalListVisible: the inbox lists the pending approvals of the
// workspaces asked for, however many conversations were active since, and
// nothing of a workspace not asked for.
func (s suite) testApprovalListVisible(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a, b := newTeam(t, st, clk, "A", uuid.New()), newTeam(t, st, clk, "B", uuid.New())
	place := func(ws uuid.UUID) *store.Conversation {
		t.Helper()
		c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Advance(time.Second)})
		noErr(t, err, "creating a conversation")
		noErr(t, st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: ws}), "placing a conversation")
		return c
	}
	list := func(p store.ApprovalListVisibleParams) []uuid.UUID {
		t.Helper()
		got, err := st.ApprovalListVisible(ctx, &p)
		noErr(t, err, "listing visible approvals")
		ids := []uuid.UUID{}
		for _, ap := range got {
			eq(t, ap.Status, store.ApprovalPending, "status of a listed approval")
			ids = append(ids, ap.ID)
		}
		return ids
	}
	t0 := clk.Now()
	oldA := place(a.ID)
	first := createApproval(t, st, oldA.ID, "call_old", clk.Advance(time.Second), t0.Add(time.Hour))
	// Many conversations of A active after the one waiting.
	for range 5 {
		place(a.ID)
	}
	inB := place(b.ID)
	second := createApproval(t, st, inB.ID, "call_b", clk.Advance(time.Second), t0.Add(time.Hour))
	newA := place(a.ID)
	third := createApproval(t, st, newA.ID, "call_new", clk.Advance(time.Second), t0.Add(time.Hour))
	decided := createApproval(t, st, newA.ID, "call_decided", clk.Advance(time.Second), t0.Add(time.Hour))
	_, err := st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: decided.ID, Status: store.ApprovalDenied, DecidedBy: "user:U1", Now: clk.Now()})
	noErr(t, err, "deciding an approval")
	outside, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Advance(time.Second)})
	noErr(t, err, "creating a conversation outside any workspace")
	fourth := createApproval(t, st, outside.ID, "call_outside", clk.Advance(time.Second), t0.Add(time.Hour))

	idsEq(t, list(store.ApprovalListVisibleParams{Workspaces: []uuid.UUID{a.ID}}), []uuid.UUID{first.ID, third.ID}, "pending approvals of A, oldest first")
	idsEq(t, list(store.ApprovalListVisibleParams{Workspaces: []uuid.UUID{b.ID}}), []uuid.UUID{second.ID}, "pending approvals of B")
	idsEq(t, list(store.ApprovalListVisibleParams{Workspaces: []uuid.UUID{a.ID, b.ID}}), []uuid.UUID{first.ID, second.ID, third.ID}, "pending approvals of A and B")
	idsEq(t, list(store.ApprovalListVisibleParams{All: true}), []uuid.UUID{first.ID, second.ID, third.ID, fourth.ID}, "every pending approval")
	idsEq(t, list(store.ApprovalListVisibleParams{All: true, Limit: 2}), []uuid.UUID{first.ID, second.ID}, "a limited page")
	idsEq(t, list(store.ApprovalListVisibleParams{}), []uuid.UUID{}, "no workspaces")
	idsEq(t, list(store.ApprovalListVisibleParams{Workspaces: []uuid.UUID{uuid.New()}}), []uuid.UUID{}, "another workspace")
	_, err = st.ApprovalListVisible(ctx, &store.ApprovalListVisibleParams{All: true, Limit: 501})
	errIs(t, err, store.ErrInvalid, "a limit over the page size")
}
