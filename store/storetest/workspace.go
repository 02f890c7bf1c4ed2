package storetest

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) workspaceTests() []namedTest {
	return []namedTest{
		{"CreateAndRoles", s.testWorkspaceRoles},
		{"OwnerIsFixed", s.testWorkspaceOwnerFixed},
		{"PersonalOncePerPerson", s.testWorkspacePersonal},
		{"Delete", s.testWorkspaceDelete},
		{"BindTeam", s.testWorkspaceBind},
		{"RowsCarryTheirWorkspace", s.testWorkspaceStamped},
		{"ConversationWorkspaceSet", s.testConversationWorkspaceSet},
		{"PinsAndDirectory", s.testAgentPinsAndDirectory},
		{"AgentsSharedByDefault", s.testAgentsVisible},
	}
}

func newTeam(t testing.TB, st store.Queries, clk *clock, name string, owner uuid.UUID) *store.Workspace {
	t.Helper()
	ws, err := st.WorkspaceCreate(ctxFor(t), &store.WorkspaceCreateParams{Name: name, Kind: store.WorkspaceTeam, OwnerPersonID: owner, Now: clk.Now()})
	noErr(t, err, "creating team workspace %q", name)
	return ws
}

func (s suite) testWorkspaceRoles(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	owner, ana, bo := uuid.New(), uuid.New(), uuid.New()
	ws := newTeam(t, st, clk, " Acme ", owner)
	eq(t, ws.Name, "Acme", "the name, trimmed")
	eq(t, ws.Kind, store.WorkspaceTeam, "the kind")
	eq(t, ws.OwnerPersonID, owner, "the owner")
	timeEq(t, ws.CreatedAt, clk.Now(), "created_at")

	m, err := st.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: owner})
	noErr(t, err, "reading the owner's membership")
	eq(t, m.Role, store.RoleOwner, "the creator's role")

	_, err = st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: ana, Role: store.RoleAdmin})
	noErr(t, err, "adding an admin")
	_, err = st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: bo, Role: store.RoleMember})
	noErr(t, err, "adding a member")
	m, err = st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: bo, Role: store.RoleAdmin})
	noErr(t, err, "promoting a member")
	eq(t, m.Role, store.RoleAdmin, "the promoted role")
	_, err = st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: bo, Role: "boss"})
	errIs(t, err, store.ErrInvalid, "an unknown role")
	_, err = st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: uuid.New(), PersonID: bo, Role: store.RoleMember})
	errIs(t, err, store.ErrNotFound, "a member of an unknown workspace")

	members, err := st.WorkspaceMemberList(ctx, ws.ID)
	noErr(t, err, "listing members")
	eq(t, len(members), 3, "members")

	mine, err := st.WorkspaceListByPerson(ctx, bo)
	noErr(t, err, "listing bo's workspaces")
	eq(t, len(mine), 1, "bo's workspaces")
	eq(t, mine[0].Workspace.ID, ws.ID, "bo's workspace")
	eq(t, mine[0].Role, store.RoleAdmin, "bo's role")

	noErr(t, st.WorkspaceMemberRemove(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: bo}), "removing bo")
	_, err = st.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: bo})
	errIs(t, err, store.ErrNotFound, "a removed member")
	errIs(t, st.WorkspaceMemberRemove(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: bo}), store.ErrNotFound, "removing twice")
}

func (s suite) testWorkspaceOwnerFixed(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	owner, ana := uuid.New(), uuid.New()
	ws := newTeam(t, st, clk, "Acme", owner)
	_, err := st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: owner, Role: store.RoleMember})
	errIs(t, err, store.ErrOwnerFixed, "demoting the owner")
	_, err = st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: ana, Role: store.RoleOwner})
	errIs(t, err, store.ErrOwnerFixed, "making someone else owner")
	err = st.WorkspaceMemberRemove(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: owner})
	errIs(t, err, store.ErrOwnerFixed, "removing the owner")
	errIs(t, err, store.ErrConflict, "removing the owner")
	m, err := st.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: owner})
	noErr(t, err, "reading the owner after the refusals")
	eq(t, m.Role, store.RoleOwner, "the owner's role after the refusals")
}

func (s suite) testWorkspacePersonal(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	person := uuid.New()
	var (
		wg  sync.WaitGroup
		ids [4]uuid.UUID
		mu  sync.Mutex
		bad error
	)
	for i := range ids {
		wg.Go(func() {
			ws, err := st.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: person, Name: "Ana"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				bad = err
				return
			}
			ids[i] = ws.ID
		})
	}
	wg.Wait()
	noErr(t, bad, "ensuring a personal workspace four times at once")
	for _, id := range ids {
		eq(t, id, ids[0], "every ensure's workspace")
	}
	ws, err := st.WorkspaceGet(ctx, ids[0])
	noErr(t, err, "reading the personal workspace")
	eq(t, ws.Kind, store.WorkspacePersonal, "its kind")
	mine, err := st.WorkspaceListByPerson(ctx, person)
	noErr(t, err, "listing the person's workspaces")
	eq(t, len(mine), 1, "workspaces of a person with only a personal one")
	eq(t, mine[0].Role, store.RoleOwner, "the person's role in it")
	_, err = st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "x", Kind: store.WorkspacePersonal, OwnerPersonID: person})
	errIs(t, err, store.ErrInvalid, "creating a personal workspace directly")
	errIs(t, st.WorkspaceDelete(ctx, ws.ID), store.ErrConflict, "deleting a personal workspace")
}

func (s suite) testWorkspaceDelete(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	owner := uuid.New()
	ws := newTeam(t, st, clk, "Acme", owner)
	_, err := st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "T1", WorkspaceID: ws.ID})
	noErr(t, err, "binding a team")
	noErr(t, st.WorkspaceDelete(ctx, ws.ID), "deleting a team workspace")
	_, err = st.WorkspaceGet(ctx, ws.ID)
	errIs(t, err, store.ErrNotFound, "a deleted workspace")
	mine, err := st.WorkspaceListByPerson(ctx, owner)
	noErr(t, err, "listing the owner's workspaces")
	eq(t, len(mine), 0, "the owner's workspaces after the delete")
	_, err = st.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: "slack", ExternalID: "T1"})
	errIs(t, err, store.ErrNotFound, "the binding of a deleted workspace")
	errIs(t, st.WorkspaceDelete(ctx, ws.ID), store.ErrNotFound, "deleting twice")
}

func (s suite) testWorkspaceBind(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a, b := newTeam(t, st, clk, "A", uuid.New()), newTeam(t, st, clk, "B", uuid.New())
	wb, err := st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "T1", WorkspaceID: a.ID, Now: clk.Now()})
	noErr(t, err, "binding T1 to A")
	eq(t, wb.WorkspaceID, a.ID, "the bound workspace")
	timeEq(t, wb.CreatedAt, clk.Now(), "the binding's created_at")
	_, err = st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "T1", WorkspaceID: a.ID, Now: clk.Advance(time.Hour)})
	noErr(t, err, "binding T1 to A again")
	_, err = st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "T1", WorkspaceID: b.ID})
	errIs(t, err, store.ErrConflict, "binding T1 to B too")
	_, err = st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "discord", ExternalID: "T1", WorkspaceID: b.ID})
	noErr(t, err, "binding a Discord guild with the same id to B")
	_, err = st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "T9", WorkspaceID: uuid.New()})
	errIs(t, err, store.ErrNotFound, "binding to an unknown workspace")
	got, err := st.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: "slack", ExternalID: "T1"})
	noErr(t, err, "finding T1")
	eq(t, got.WorkspaceID, a.ID, "T1's workspace")
	_, err = st.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: "slack", ExternalID: "T2"})
	errIs(t, err, store.ErrNotFound, "an unbound team")
}

func (s suite) testWorkspaceStamped(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a := newTeam(t, st, clk, "A", uuid.New())
	_, err := st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "TA", WorkspaceID: a.ID})
	noErr(t, err, "binding TA")

	bind := func(team, channel string) uuid.UUID {
		t.Helper()
		res, err := st.BindingEnsure(ctx, &store.BindingEnsureParams{
			Place:        store.Place{Platform: "slack", Workspace: team, Channel: channel},
			Conversation: store.ConversationCreateParams{Title: "t", Now: clk.Now()}, Now: clk.Now(),
		})
		noErr(t, err, "binding a conversation in %s/%s", team, channel)
		return res.Binding.ConversationID
	}
	inA, nowhere := bind("TA", "C1"), bind("TB", "C1")
	wsOf := func(conv uuid.UUID) *uuid.UUID {
		t.Helper()
		id, err := st.ConversationWorkspace(ctx, conv)
		noErr(t, err, "reading the workspace of %s", conv)
		return id
	}
	isTrue(t, wsOf(inA) != nil && *wsOf(inA) == a.ID, "a conversation in bound team TA: want workspace A, got %v", wsOf(inA))
	isTrue(t, wsOf(nowhere) == nil, "a conversation in unbound team TB: want no workspace, got %v", wsOf(nowhere))
	_, err = st.ConversationWorkspace(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "the workspace of an unknown conversation")

	appendN(t, st, clk, inA, 2)
	fork, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: inA, ExpectSeq: ptr(int64(2)), Kind: store.EntryUser, Content: content("edit"), Now: clk.Now()})
	noErr(t, err, "forking")
	isTrue(t, fork.Forked, "the append forked")
	isTrue(t, wsOf(fork.ConversationID) != nil && *wsOf(fork.ConversationID) == a.ID, "a fork: want its parent's workspace, got %v", wsOf(fork.ConversationID))

	ap := createApproval(t, st, inA, "call1", clk.Now(), clk.Now().Add(time.Hour))
	_ = ap
	noErr(t, st.AuditRecord(ctx, &store.AuditRecord{ID: uuid.New(), ConversationID: &inA, CallID: "c1", Actor: "user:U1", Action: "t", Risk: "low",
		Decision: "auto", Outcome: store.AuditOK, Detail: json.RawMessage(`{}`), CreatedAt: clk.Now()}), "recording audit")
	audit, err := st.AuditList(ctx, &store.AuditListParams{ConversationID: &inA})
	noErr(t, err, "listing audit")
	isTrue(t, len(audit) == 1 && audit[0].WorkspaceID != nil && *audit[0].WorkspaceID == a.ID, "an audit row in A: want workspace A, got %+v", audit)
	noErr(t, st.AuditRecord(ctx, &store.AuditRecord{ID: uuid.New(), ConversationID: &nowhere, CallID: "c1", Actor: "user:U1", Action: "t", Risk: "low",
		Decision: "auto", Outcome: store.AuditOK, Detail: json.RawMessage(`{}`), CreatedAt: clk.Now()}), "recording audit outside A")
	audit, err = st.AuditList(ctx, &store.AuditListParams{WorkspaceID: &a.ID})
	noErr(t, err, "listing audit by workspace id")
	isTrue(t, len(audit) == 1 && *audit[0].ConversationID == inA, "the audit of workspace A by its id: want the one row in A, got %+v", audit)
	other := uuid.New()
	audit, err = st.AuditList(ctx, &store.AuditListParams{WorkspaceID: &other})
	noErr(t, err, "listing audit by an unknown workspace id")
	isTrue(t, len(audit) == 0, "the audit of an unknown workspace: want no rows, got %+v", audit)
	noErr(t, st.UsageRecord(ctx, &store.Usage{ID: uuid.New(), ConversationID: inA, Provider: "p", Model: "m", CreatedAt: clk.Now()}), "recording usage")
	usage, err := st.UsageList(ctx, inA)
	noErr(t, err, "listing usage")
	isTrue(t, len(usage) == 1 && usage[0].WorkspaceID != nil && *usage[0].WorkspaceID == a.ID, "a usage row in A: want workspace A, got %+v", usage)

	next := clk.Now().Add(time.Hour)
	mk := func(team, name string) *store.Schedule {
		sc, err := st.ScheduleCreate(ctx, &store.ScheduleCreateParams{
			Kind: store.ScheduleRoutine, Agent: "atlas", Name: name, Owner: "U1",
			Place: store.Place{Platform: "slack", Workspace: team, Channel: "C1"},
			Spec:  "every 1h", Instruction: "x", NextRunAt: &next, Now: clk.Now(),
		})
		noErr(t, err, "creating routine %s", name)
		return sc
	}
	scA, scB := mk("TA", "a"), mk("TB", "b")
	got, err := st.ScheduleWorkspace(ctx, scA.ID)
	noErr(t, err, "reading a schedule's workspace")
	isTrue(t, got != nil && *got == a.ID, "a routine made in TA: want workspace A, got %v", got)
	got, err = st.ScheduleWorkspace(ctx, scB.ID)
	noErr(t, err, "reading a schedule's workspace")
	isTrue(t, got == nil, "a routine made in unbound TB: want no workspace, got %v", got)

	// Binding TB now changes nothing made before: rows keep the workspace
	// they were made in.
	b := newTeam(t, st, clk, "B", uuid.New())
	_, err = st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "TB", WorkspaceID: b.ID})
	noErr(t, err, "binding TB")
	isTrue(t, wsOf(nowhere) == nil, "an earlier conversation of TB: want it left without a workspace")
	isTrue(t, *wsOf(bind("TB", "C2")) == b.ID, "a new conversation in TB: want workspace B")
}

func (s suite) testConversationWorkspaceSet(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a, b := newTeam(t, st, clk, "A", uuid.New()), newTeam(t, st, clk, "B", uuid.New())
	c := newConversation(t, st, clk)
	noErr(t, st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: a.ID}), "putting a conversation in A")
	noErr(t, st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: a.ID}), "putting it in A again")
	err := st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: b.ID})
	errIs(t, err, store.ErrConflict, "moving it to B")
	err = st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: uuid.New(), WorkspaceID: b.ID})
	errIs(t, err, store.ErrNotFound, "an unknown conversation")
	got, err := st.ConversationWorkspace(ctx, c.ID)
	noErr(t, err, "reading its workspace")
	isTrue(t, got != nil && *got == a.ID, "the conversation's workspace: want A, got %v", got)
	// The conversation read whole carries it too (a turn reads it there).
	conv, err := st.ConversationGet(ctx, c.ID)
	noErr(t, err, "reading the conversation")
	isTrue(t, conv.WorkspaceID != nil && *conv.WorkspaceID == a.ID, "the conversation's WorkspaceID: want A, got %v", conv.WorkspaceID)
	other, err := st.ConversationGet(ctx, newConversation(t, st, clk).ID)
	noErr(t, err, "reading a conversation in no workspace")
	isTrue(t, other.WorkspaceID == nil, "a conversation in no workspace has WorkspaceID %v, want nil", other.WorkspaceID)
}

func (s suite) testAgentPinsAndDirectory(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	owner, stranger := uuid.New(), uuid.New()
	ag, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "upserting an agent")

	sh, err := st.AgentSharingGet(ctx, ag.ID)
	noErr(t, err, "reading a never-shared agent")
	isTrue(t, sh.OwnerPersonID == nil && len(sh.Pins) == 0 && !sh.Published, "a never-shared agent: want the operator's, unpinned, unpublished; got %+v", sh)

	team := newTeam(t, st, clk, "Acme", owner)
	personal, err := st.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: owner, Name: "Ana"})
	noErr(t, err, "ensuring the owner's personal workspace")
	sh, err = st.AgentOwnerSet(ctx, &store.AgentOwnerSetParams{AgentID: ag.ID, OwnerPersonID: &owner})
	noErr(t, err, "giving the agent to its owner")
	isTrue(t, sh.OwnerPersonID != nil && *sh.OwnerPersonID == owner, "the agent's owner: got %v", sh.OwnerPersonID)

	other := newTeam(t, st, clk, "Elsewhere", stranger)
	_, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{other.ID}})
	errIs(t, err, store.ErrConflict, "pinning to a workspace the owner is not in")
	_, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{uuid.New()}})
	errIs(t, err, store.ErrInvalid, "pinning to an unknown workspace")

	sh, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{team.ID, team.ID}})
	noErr(t, err, "pinning to the team")
	deepEq(t, sh.Pins, []uuid.UUID{team.ID}, "the pins")
	_, err = st.AgentPublish(ctx, &store.AgentPublishParams{AgentID: ag.ID, Published: true})
	errIs(t, err, store.ErrPublishedPin, "publishing an agent pinned to a team workspace")
	isTrue(t, err != nil && errors.Is(err, store.ErrConflict), "the refusal is a conflict")
	dir, err := st.AgentDirectory(ctx)
	noErr(t, err, "listing the directory")
	eq(t, len(dir), 0, "directory entries after the refusal")

	_, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{personal.ID}})
	noErr(t, err, "pinning to the personal workspace only")
	sh, err = st.AgentPublish(ctx, &store.AgentPublishParams{AgentID: ag.ID, Published: true})
	noErr(t, err, "publishing an agent pinned to its owner's personal workspace")
	isTrue(t, sh.Published, "published")
	dir, err = st.AgentDirectory(ctx)
	noErr(t, err, "listing the directory")
	isTrue(t, len(dir) == 1 && dir[0].Name == "atlas" && dir[0].AgentID == ag.ID, "the directory: want atlas, got %+v", dir)
	_, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{personal.ID, team.ID}})
	errIs(t, err, store.ErrPublishedPin, "pinning a published agent to a team workspace")

	sh, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID})
	noErr(t, err, "unpinning")
	eq(t, len(sh.Pins), 0, "pins after unpinning")
	_, err = st.AgentPublish(ctx, &store.AgentPublishParams{AgentID: ag.ID, Published: false})
	noErr(t, err, "unpublishing")
	dir, err = st.AgentDirectory(ctx)
	noErr(t, err, "listing the directory")
	eq(t, len(dir), 0, "directory entries after unpublishing")

	// Deleting a workspace drops the pins to it.
	_, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{team.ID}})
	noErr(t, err, "pinning to the team again")
	noErr(t, st.WorkspaceDelete(ctx, team.ID), "deleting the team")
	sh, err = st.AgentSharingGet(ctx, ag.ID)
	noErr(t, err, "reading the sharing")
	eq(t, len(sh.Pins), 0, "pins after the workspace went")
}

func (s suite) testAgentsVisible(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	ana, bo := uuid.New(), uuid.New()
	a, b := newTeam(t, st, clk, "A", ana), newTeam(t, st, clk, "B", bo)
	_, err := st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: b.ID, PersonID: ana, Role: store.RoleMember})
	noErr(t, err, "adding ana to B")
	personal, err := st.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: ana})
	noErr(t, err, "ana's personal workspace")
	mk := func(name string, owner *uuid.UUID) uuid.UUID {
		ag, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: name, Config: json.RawMessage(`{}`), Now: clk.Now()})
		noErr(t, err, "upserting %s", name)
		if owner != nil {
			_, err = st.AgentOwnerSet(ctx, &store.AgentOwnerSetParams{AgentID: ag.ID, OwnerPersonID: owner})
			noErr(t, err, "giving %s to its owner", name)
		}
		return ag.ID
	}
	mk("ops", nil)
	mk("anas", &ana)
	mk("bos", &bo)
	pinned := mk("private", &ana)
	_, err = st.AgentPin(ctx, &store.AgentPinParams{AgentID: pinned, WorkspaceIDs: []uuid.UUID{personal.ID}})
	noErr(t, err, "pinning private to ana's personal workspace")

	names := func(ws uuid.UUID) string {
		t.Helper()
		ls, err := st.AgentListVisible(ctx, ws)
		noErr(t, err, "listing the agents of %s", ws)
		var out []string
		for _, l := range ls {
			out = append(out, l.Name)
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	eq(t, names(a.ID), `["anas","ops"]`, "agents seen in A (ana's team)")
	eq(t, names(b.ID), `["anas","bos","ops"]`, "agents seen in B (bo's team, ana a member)")
	eq(t, names(personal.ID), `["anas","ops","private"]`, "agents seen in ana's personal workspace")
}
