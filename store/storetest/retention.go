package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) retentionTests() []namedTest {
	return []namedTest{
		{"Settings", s.testRetentionSettings},
		{"PurgeTakesEveryRow", s.testRetentionPurge},
		{"BatchBound", s.testRetentionBatch},
		{"BusyTreesKept", s.testRetentionBusy},
		{"ForgetPerson", s.testForgetPerson},
		{"ForgetDeletesMessages", s.testForgetDeletesMessages},
	}
}

const day = 24 * time.Hour

func (s suite) testRetentionSettings(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	ws := newTeam(t, st, clk, "acme", uuid.New())

	got, err := st.WorkspaceRetentionGet(ctx, ws.ID)
	noErr(t, err, "reading a retention never set")
	eq(t, got.KeepDays, 0, "a workspace keeps its conversations forever by default")

	set, err := st.WorkspaceRetentionSet(ctx, &store.WorkspaceRetentionSetParams{WorkspaceID: ws.ID, KeepDays: 30, ExportDir: "/var/lib/sb/export/", Now: clk.Now()})
	noErr(t, err, "setting 30 days with an export")
	eq(t, set.KeepDays, 30, "days set")
	eq(t, set.ExportDir, "/var/lib/sb/export", "the export directory, cleaned")
	got, err = st.WorkspaceRetentionGet(ctx, ws.ID)
	noErr(t, err, "reading the retention")
	eq(t, got.KeepDays, 30, "days read back")
	eq(t, got.ExportDir, "/var/lib/sb/export", "export directory read back")
	isTrue(t, got.UpdatedAt.Equal(clk.Now()), "updated at the time of the set, got %s", got.UpdatedAt)

	list, err := st.WorkspaceRetentionList(ctx)
	noErr(t, err, "listing retentions")
	eq(t, len(list), 1, "workspaces with a retention")
	eq(t, list[0].WorkspaceID, ws.ID, "the workspace listed")

	for _, bad := range []store.WorkspaceRetentionSetParams{
		{WorkspaceID: ws.ID, KeepDays: -1},
		{WorkspaceID: ws.ID, KeepDays: store.MaxKeepDays + 1},
		{WorkspaceID: ws.ID, KeepDays: 7, ExportDir: "relative/dir"},
		{WorkspaceID: ws.ID, KeepDays: 0, ExportDir: "/tmp/x"},
	} {
		_, err := st.WorkspaceRetentionSet(ctx, &bad)
		errIs(t, err, store.ErrInvalid, "setting %+v", bad)
	}
	_, err = st.WorkspaceRetentionSet(ctx, &store.WorkspaceRetentionSetParams{WorkspaceID: uuid.New(), KeepDays: 3})
	errIs(t, err, store.ErrNotFound, "setting the retention of an unknown workspace")
	_, err = st.WorkspaceRetentionGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "reading the retention of an unknown workspace")

	_, err = st.WorkspaceRetentionSet(ctx, &store.WorkspaceRetentionSetParams{WorkspaceID: ws.ID, KeepDays: 0})
	noErr(t, err, "taking the retention off")
	got, err = st.WorkspaceRetentionGet(ctx, ws.ID)
	noErr(t, err, "reading the retention taken off")
	eq(t, got.KeepDays, 0, "kept forever again")
	list, err = st.WorkspaceRetentionList(ctx)
	noErr(t, err, "listing retentions")
	eq(t, len(list), 0, "workspaces with a retention once it is off")

	// Deleting the workspace takes its retention with it.
	_, err = st.WorkspaceRetentionSet(ctx, &store.WorkspaceRetentionSetParams{WorkspaceID: ws.ID, KeepDays: 5})
	noErr(t, err, "setting 5 days")
	noErr(t, st.WorkspaceDelete(ctx, ws.ID), "deleting the workspace")
	list, err = st.WorkspaceRetentionList(ctx)
	noErr(t, err, "listing retentions")
	eq(t, len(list), 0, "retentions of a deleted workspace")
}

// expired lists the trees of ws expired at now for keep.
func expired(t *testing.T, st store.Store, ws uuid.UUID, now time.Time, keep time.Duration, limit int, after *store.RetentionCursor) []*store.ExpiredTree {
	t.Helper()
	trees, err := st.ConversationExpiredList(ctxFor(t), &store.ConversationExpiredListParams{WorkspaceID: ws, Before: now.Add(-keep), Now: now, Limit: limit, After: after})
	noErr(t, err, "listing the expired trees of %s", ws)
	return trees
}

func roots(trees []*store.ExpiredTree) []uuid.UUID {
	out := make([]uuid.UUID, len(trees))
	for i, tr := range trees {
		out[i] = tr.RootID
	}
	return out
}

// testRetentionPurge: a conversation of workspace A older than the
// retention goes with its fork and every row that hangs off it; a newer
// one in A and an old one in B stay.
func (s suite) testRetentionPurge(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a := newTeam(t, st, clk, "a", uuid.New()).ID
	b := newTeam(t, st, clk, "b", uuid.New()).ID

	// The old conversation is a Slack thread of a team bound to A.
	_, err := st.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: "slack", ExternalID: "T9", WorkspaceID: a, Now: clk.Now()})
	noErr(t, err, "binding T9 to a")
	bound, err := st.BindingEnsure(ctx, &store.BindingEnsureParams{Place: store.Place{Platform: "slack", Workspace: "T9", Channel: "C1", Thread: "1.1"}, Conversation: store.ConversationCreateParams{Title: "old"}, Now: clk.Advance(time.Second)})
	noErr(t, err, "binding a thread")
	old, err := st.ConversationGet(ctx, bound.Binding.ConversationID)
	noErr(t, err, "reading the thread's conversation")
	inB := titled(t, st, clk, "old in b", &b)
	say(t, st, clk, old.ID, store.EntryUser, "hello")
	say(t, st, clk, old.ID, store.EntryAssistant, "hi")
	say(t, st, clk, inB.ID, store.EntryUser, "hello b")
	// A fork of the old conversation (an edit of its first message).
	one := int64(1)
	fork, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: old.ID, ExpectSeq: &one, Kind: store.EntryUser, Author: "user:u1", Content: content("edited"), Now: clk.Advance(time.Second)})
	noErr(t, err, "forking the old conversation")
	isTrue(t, fork.Forked, "an append at a taken seq forks")
	forkID := fork.ConversationID

	// Everything that hangs off a conversation.
	now := clk.Advance(time.Second)
	card, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: old.ID, Kind: store.EntryCard, Author: "agent:atlas", Content: json.RawMessage(`{"card":{}}`), Now: now})
	noErr(t, err, "appending a card")
	_, err = st.CardChoiceSettle(ctx, &store.CardChoiceSettleParams{EntryID: card.Entry.ID, ConversationID: old.ID, ActionID: "a1", Value: "yes", UserID: "U1", Now: now})
	noErr(t, err, "settling the card")
	noErr(t, st.PostedRecord(ctx, &store.Posted{BindingID: bound.Binding.ID, EntryID: card.Entry.ID, MessageIDs: []string{"1.2"}, CreatedAt: now}), "recording a posted entry")
	noErr(t, st.LiveStreamSave(ctx, &store.LiveStream{BindingID: bound.Binding.ID, MessageIDs: []string{"C1/1.3"}, UpdatedAt: now}), "recording a live stream")
	noErr(t, st.UsageRecord(ctx, &store.Usage{ConversationID: old.ID, Provider: "p", Model: "m", InputTokens: 10, CreatedAt: now}), "recording usage")
	noErr(t, st.UsageRecord(ctx, &store.Usage{ConversationID: forkID, Provider: "p", Model: "m", InputTokens: 5, CreatedAt: now}), "recording the fork's usage")
	noErr(t, st.UsageRecord(ctx, &store.Usage{ConversationID: inB.ID, Provider: "p", Model: "m", InputTokens: 7, CreatedAt: now}), "recording usage in b")
	art, err := st.ArtifactCreate(ctx, &store.ArtifactCreateParams{ConversationID: old.ID, Kind: store.ArtifactDocument, Title: "plan", Content: "x", Now: now})
	noErr(t, err, "creating an artifact")
	_, err = st.ArtifactComment(ctx, &store.ArtifactCommentParams{ArtifactID: art.ID, Author: "user:u1", Text: "nice", Now: now})
	noErr(t, err, "commenting the artifact")
	ap := createApproval(t, st, old.ID, "call-1", now, now.Add(time.Hour))
	_, err = st.ApprovalDecide(ctx, &store.ApprovalDecideParams{ID: ap.ID, Status: store.ApprovalApproved, DecidedBy: "U1", Now: now})
	noErr(t, err, "deciding the approval")
	noErr(t, st.AuditRecord(ctx, &store.AuditRecord{ConversationID: &old.ID, CallID: "call-1", Agent: "atlas", Action: "send", Outcome: store.AuditOK, CreatedAt: now}), "auditing the call")
	noErr(t, st.AuditRecord(ctx, &store.AuditRecord{ConversationID: &inB.ID, CallID: "call-b", Agent: "atlas", Action: "send", Outcome: store.AuditOK, CreatedAt: now}), "auditing a call in b")
	_, err = st.ToolExecutionStart(ctx, &store.ToolExecutionStartParams{ConversationID: old.ID, CallID: "call-1", Now: now})
	noErr(t, err, "marking the tool call")
	_, err = st.NoteCreate(ctx, &store.NoteCreateParams{Agent: "atlas", Family: "default", ConversationID: &old.ID, Scope: store.NoteScopeConversation, Text: "remember the plan", WorkspaceID: &a, Now: now})
	noErr(t, err, "writing a conversation note")
	_, err = st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: old.ID, Text: "be brief", SetBy: "user:u1", Now: now})
	noErr(t, err, "setting the rulebook")
	_, err = st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: old.ID, Author: store.UserAuthor("U1"), Joined: store.JoinWrote, Now: now})
	noErr(t, err, "joining the conversation")
	yes := true
	_, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: old.ID, Archived: &yes, Now: now})
	noErr(t, err, "archiving")
	run, err := st.RunCreate(ctx, &store.RunCreateParams{ConversationID: old.ID, LeadAgent: "atlas", Steps: []store.RunStepSpec{{Key: "s", Title: "step", Agent: "atlas", Class: "work"}}, Now: now})
	noErr(t, err, "starting a run")
	// A finished work item of the conversation.
	item, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &old.ID, Now: now})
	noErr(t, err, "enqueueing a turn")
	claimed, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Limit: 1, LeaseTTL: time.Minute, Now: now})
	noErr(t, err, "claiming the turn")
	eq(t, len(claimed), 1, "items claimed")
	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: item.Item.ID, Worker: "w1", Now: clk.Advance(time.Second)})
	noErr(t, err, "completing the turn")

	// 31 days later a newer conversation appears in A.
	clk.Advance(31 * day)
	fresh := titled(t, st, clk, "fresh", &a)
	say(t, st, clk, fresh.ID, store.EntryUser, "new")
	now = clk.Now()

	trees := expired(t, st, a, now, 30*day, 0, nil)
	idsEq(t, roots(trees), []uuid.UUID{old.ID}, "the expired trees of a")
	idsEq(t, trees[0].IDs, []uuid.UUID{old.ID, forkID}, "the tree: the root, then its fork")
	idsEq(t, roots(expired(t, st, a, now, 40*day, 0, nil)), nil, "nothing is older than 40 days")

	res, err := st.ConversationPurge(ctx, &store.ConversationPurgeParams{RootID: old.ID, WorkspaceID: a, Before: now.Add(-30 * day), Now: now})
	noErr(t, err, "purging the old tree")
	eq(t, res.Conversations, 2, "conversations purged")
	// The root's 2 and its card; the fork's edit (it copies no entry
	// before seq 1).
	eq(t, res.Entries, 4, "entries purged")
	eq(t, res.Artifacts, 1, "artifacts purged")
	eq(t, res.Usage, 2, "usage rows purged")

	for _, id := range []uuid.UUID{old.ID, forkID} {
		_, err = st.ConversationGet(ctx, id)
		errIs(t, err, store.ErrNotFound, "reading purged conversation %s", id)
		es, err := st.EntryList(ctx, &store.EntryListParams{ConversationID: id, WithErrors: true})
		noErr(t, err, "listing the entries of purged %s", id)
		eq(t, len(es), 0, "entries left of %s", id)
		us, err := st.UsageList(ctx, id)
		noErr(t, err, "listing the usage of purged %s", id)
		eq(t, len(us), 0, "usage left of %s", id)
		ps, err := st.ParticipantList(ctx, id)
		noErr(t, err, "listing participants of %s", id)
		eq(t, len(ps), 0, "participants left of %s", id)
		work, err := st.WorkList(ctx, &store.WorkListParams{ConversationID: &id})
		noErr(t, err, "listing the work of %s", id)
		eq(t, len(work), 0, "work items left of %s", id)
		audit, err := st.AuditList(ctx, &store.AuditListParams{ConversationID: &id})
		noErr(t, err, "listing the audit of %s", id)
		eq(t, len(audit), 0, "audit rows left of %s", id)
	}
	_, err = st.ArtifactGet(ctx, art.ID)
	errIs(t, err, store.ErrNotFound, "reading the purged artifact")
	_, err = st.ApprovalGet(ctx, ap.ID)
	errIs(t, err, store.ErrNotFound, "reading the purged approval")
	_, err = st.CardChoiceGet(ctx, card.Entry.ID)
	errIs(t, err, store.ErrNotFound, "reading the purged card choice")
	_, err = st.RulebookGet(ctx, old.ID)
	errIs(t, err, store.ErrNotFound, "reading the purged rulebook")
	_, err = st.RunGet(ctx, run.ID)
	errIs(t, err, store.ErrNotFound, "reading the purged run")
	_, err = st.ConversationFilingGet(ctx, old.ID)
	errIs(t, err, store.ErrNotFound, "reading the purged filing")
	notes, err := st.NoteList(ctx, &store.NoteListParams{Agent: "atlas", ConversationID: &old.ID, WithArchived: true})
	noErr(t, err, "listing the notes of the purged conversation")
	eq(t, len(notes), 0, "notes left of the purged conversation")
	_, err = st.BindingFind(ctx, &store.BindingFindParams{Place: store.Place{Platform: "slack", Workspace: "T9", Channel: "C1", Thread: "1.1"}})
	errIs(t, err, store.ErrNotFound, "finding the purged thread's binding")
	_, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: bound.Binding.ID, EntryID: card.Entry.ID})
	errIs(t, err, store.ErrNotFound, "reading the purged posted record")
	_, err = st.LiveStreamGet(ctx, bound.Binding.ID)
	errIs(t, err, store.ErrNotFound, "reading the purged live stream")

	// What is not the old tree's stays.
	for _, c := range []*store.Conversation{fresh, inB} {
		_, err = st.ConversationGet(ctx, c.ID)
		noErr(t, err, "reading kept conversation %q", c.Title)
		es, err := st.EntryList(ctx, &store.EntryListParams{ConversationID: c.ID})
		noErr(t, err, "listing the entries of %q", c.Title)
		eq(t, len(es), 1, "entries of kept %q", c.Title)
	}
	us, err := st.UsageList(ctx, inB.ID)
	noErr(t, err, "listing usage in b")
	eq(t, len(us), 1, "usage rows of b")
	audit, err := st.AuditList(ctx, &store.AuditListParams{ConversationID: &inB.ID})
	noErr(t, err, "listing the audit of b")
	eq(t, len(audit), 1, "audit rows of b")
	idsEq(t, roots(expired(t, st, b, now, 30*day, 0, nil)), []uuid.UUID{inB.ID}, "b's old conversation, for b's own retention")

	// A tree of another workspace is refused; a purged one is gone.
	_, err = st.ConversationPurge(ctx, &store.ConversationPurgeParams{RootID: inB.ID, WorkspaceID: a, Before: now.Add(-30 * day), Now: now})
	errIs(t, err, store.ErrConflict, "purging b's conversation under a's retention")
	_, err = st.ConversationPurge(ctx, &store.ConversationPurgeParams{RootID: old.ID, WorkspaceID: a, Before: now.Add(-30 * day), Now: now})
	errIs(t, err, store.ErrNotFound, "purging the old tree again")
	idsEq(t, roots(expired(t, st, a, now, 30*day, 0, nil)), nil, "a's expired trees after the purge")
}

// testRetentionBatch: a listing returns at most Limit trees, oldest first,
// and its cursor continues after the last.
func (s suite) testRetentionBatch(t *testing.T) {
	st := s.newStore(t)
	clk := newClock()
	a := newTeam(t, st, clk, "a", uuid.New()).ID
	var want []uuid.UUID
	for i := range 5 {
		c := titled(t, st, clk, "c"+string(rune('0'+i)), &a)
		want = append(want, c.ID)
	}
	now := clk.Advance(10 * day)

	first := expired(t, st, a, now, 7*day, 2, nil)
	idsEq(t, roots(first), want[:2], "the first batch of 2")
	second := expired(t, st, a, now, 7*day, 2, first[1].Cursor())
	idsEq(t, roots(second), want[2:4], "the second batch, after the first")
	third := expired(t, st, a, now, 7*day, 2, second[1].Cursor())
	idsEq(t, roots(third), want[4:], "the last batch, short")

	_, err := st.ConversationExpiredList(ctxFor(t), &store.ConversationExpiredListParams{WorkspaceID: a, Before: now, Limit: store.DefaultListLimit + 1})
	errIs(t, err, store.ErrInvalid, "a batch over the bound")
}

// testRetentionBusy: a tree with a running turn, pending work, an approval
// waiting or a fork active since the cutoff is neither listed nor purged.
func (s suite) testRetentionBusy(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a := newTeam(t, st, clk, "a", uuid.New()).ID

	running := titled(t, st, clk, "running", &a)
	pending := titled(t, st, clk, "pending", &a)
	waiting := titled(t, st, clk, "waiting", &a)
	forked := titled(t, st, clk, "forked", &a)
	idle := titled(t, st, clk, "idle", &a)
	say(t, st, clk, forked.ID, store.EntryUser, "first")

	// A turn claimed with a lease that outlives the test's clock.
	turn, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &running.ID, Now: clk.Now()})
	noErr(t, err, "enqueueing the running turn")
	claimed, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Limit: 1, LeaseTTL: 60 * day, Now: clk.Advance(time.Second)})
	noErr(t, err, "claiming the turn")
	eq(t, len(claimed), 1, "items claimed")
	// Work not yet run (a retry later on).
	_, err = st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &pending.ID, RunAt: clk.Now().Add(90 * day), Now: clk.Now()})
	noErr(t, err, "enqueueing pending work")
	createApproval(t, st, waiting.ID, "ask", clk.Now(), clk.Now().Add(90*day))

	now := clk.Advance(31 * day)
	// The fork of an old root, written after the cutoff.
	zero := int64(1)
	_, err = st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: forked.ID, ExpectSeq: &zero, Kind: store.EntryUser, Author: "user:u1", Content: content("edit"), Now: now})
	noErr(t, err, "forking the old root now")

	idsEq(t, roots(expired(t, st, a, now, 30*day, 0, nil)), []uuid.UUID{idle.ID}, "the only tree that may go")
	before := now.Add(-30 * day)
	for _, c := range []*store.Conversation{running, pending, waiting, forked} {
		_, err := st.ConversationPurge(ctx, &store.ConversationPurgeParams{RootID: c.ID, WorkspaceID: a, Before: before, Now: now})
		errIs(t, err, store.ErrConflict, "purging busy %q", c.Title)
		_, err = st.ConversationGet(ctx, c.ID)
		noErr(t, err, "reading busy %q after the refused purge", c.Title)
	}

	// The turn finishes: the conversation is active again, and goes only
	// once that activity is past the retention too.
	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: turn.Item.ID, Worker: "w1", Now: now})
	noErr(t, err, "completing the turn")
	got, err := st.ConversationGet(ctx, running.ID)
	noErr(t, err, "reading the finished conversation")
	later := got.UpdatedAt.Add(30*day + time.Second)
	isTrue(t, contains(roots(expired(t, st, a, later, 30*day, 0, nil)), running.ID), "a finished turn's conversation expires 30 days after it ran")

	// A message between the listing and the purge keeps the tree.
	trees := expired(t, st, a, later, 30*day, 0, nil)
	isTrue(t, contains(roots(trees), idle.ID), "idle is listed")
	_, err = st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: idle.ID, Kind: store.EntryUser, Author: "user:u1", Content: content("still here"), Now: later})
	noErr(t, err, "writing in idle after the listing")
	_, err = st.ConversationPurge(ctx, &store.ConversationPurgeParams{RootID: idle.ID, WorkspaceID: a, Before: later.Add(-30 * day), Now: later})
	errIs(t, err, store.ErrConflict, "purging a tree written to since the listing")
}

func contains(ids []uuid.UUID, id uuid.UUID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// forgetWorld is a person with everything the forget takes, and another
// person with the same kinds of things, which stay.
type forgetWorld struct {
	ana, anaOld, bob *store.Person
	conv             *store.Conversation
	anaPersonal      *store.Workspace
	bobPersonal      *store.Workspace
	team             *store.Workspace // Bob's, Ana an admin
	anaTeam          *store.Workspace // Ana's own
	anaEntry         uuid.UUID
	anaAPIEntry      uuid.UUID
	bobEntry         uuid.UUID
}

func setUpForget(t *testing.T, st store.Store, clk *clock) *forgetWorld {
	t.Helper()
	ctx := ctxFor(t)
	w := &forgetWorld{}
	var err error
	w.ana, err = st.PersonCreate(ctx, &store.PersonCreateParams{Identity: slackAna, DisplayName: "Ana", Now: clk.Now()})
	noErr(t, err, "creating Ana")
	w.anaOld, err = st.PersonCreate(ctx, &store.PersonCreateParams{Identity: discordAna, DisplayName: "ana#1", Now: clk.Advance(time.Second)})
	noErr(t, err, "creating Ana's Discord record")
	_, err = st.PersonMerge(ctx, &store.PersonMergeParams{Keep: w.ana.ID, Drop: w.anaOld.ID, DisplayName: "Ana", Now: clk.Now()})
	noErr(t, err, "merging Ana's records")
	bobID := store.Identity{Platform: "slack", Workspace: "T1", UserID: "U2"}
	w.bob, err = st.PersonCreate(ctx, &store.PersonCreateParams{Identity: bobID, DisplayName: "Bob", Now: clk.Now()})
	noErr(t, err, "creating Bob")

	w.anaPersonal, err = st.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: w.ana.ID, Name: "Ana", Now: clk.Now()})
	noErr(t, err, "Ana's personal workspace")
	w.bobPersonal, err = st.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: w.bob.ID, Name: "Bob", Now: clk.Now()})
	noErr(t, err, "Bob's personal workspace")
	w.team = newTeam(t, st, clk, "bob's team", w.bob.ID)
	_, err = st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: w.team.ID, PersonID: w.ana.ID, Role: store.RoleAdmin, Now: clk.Now()})
	noErr(t, err, "making Ana an admin of Bob's team")
	w.anaTeam = newTeam(t, st, clk, "ana's team", w.ana.ID)

	for _, p := range []*store.Person{w.ana, w.bob} {
		personal := w.anaPersonal.ID
		if p == w.bob {
			personal = w.bobPersonal.ID
		}
		_, err = st.NoteCreate(ctx, &store.NoteCreateParams{Agent: "atlas", Family: "default", Scope: store.NoteScopeAgent, Text: "likes tea " + p.DisplayName, WorkspaceID: &personal, Now: clk.Now()})
		noErr(t, err, "a note in %s's personal workspace", p.DisplayName)
		_, err = st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyPersonal, Lookup: "look-" + p.DisplayName, SecretHash: make([]byte, 32), PersonID: &p.ID, Now: clk.Now()})
		noErr(t, err, "a personal token of %s", p.DisplayName)
		hash := make([]byte, 32)
		copy(hash, p.DisplayName)
		_, err = st.LoginCreate(ctx, &store.LoginCreateParams{Kind: store.LoginSession, SecretHash: hash, PersonID: &p.ID, ExpiresAt: clk.Now().Add(day), Now: clk.Now()})
		noErr(t, err, "a console session of %s", p.DisplayName)
		saveConnection(t, st, store.ProviderGitHub, store.ConnectionOwner{PersonID: &p.ID}, "v1:k1:TOKEN", clk.Now())
	}
	for _, u := range []struct{ id, code string }{{"U1", "ANA123"}, {"U2", "BOB123"}} {
		_, err = st.PairingRequest(ctx, &store.PairingRequestParams{Platform: "slack", UserID: u.id, Workspace: "T1", Code: u.code, Now: clk.Now(), ExpiresAt: clk.Now().Add(day)})
		noErr(t, err, "a pairing request of %s", u.id)
		_, err = st.PairingApprove(ctx, &store.PairingApproveParams{Code: u.code, By: "operator", Now: clk.Now()})
		noErr(t, err, "approving %s", u.id)
		_, err = st.GrantCreate(ctx, &store.GrantCreateParams{Agent: "atlas", Tool: "send_" + u.id, Workspace: "T1", GrantedBy: u.id, Now: clk.Now()})
		noErr(t, err, "a grant by %s", u.id)
	}
	_, err = st.PersonLinkCodeCreate(ctx, &store.PersonLinkCodeCreateParams{PersonID: w.ana.ID, CodeHash: "hash-ana", Platform: "slack", ExpiresAt: clk.Now().Add(time.Hour), Now: clk.Now()})
	noErr(t, err, "a link code of Ana")

	// A conversation both wrote in: Ana on Slack and through the API, Bob.
	w.conv = titled(t, st, clk, "chat", &w.team.ID)
	appendAs := func(author store.Author, body string) uuid.UUID {
		r, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: w.conv.ID, Kind: store.EntryUser, Author: author, Content: json.RawMessage(body), Now: clk.Advance(time.Second)})
		noErr(t, err, "appending as %s", author)
		return r.Entry.ID
	}
	w.anaEntry = appendAs("user:U1", `{"text":"my secret plan","user_id":"U1","user_name":"Ana","platform":"slack"}`)
	w.anaAPIEntry = appendAs(store.UserAuthor("person:"+w.ana.ID.String()), `{"text":"from the console","page_context":"the invoice"}`)
	w.bobEntry = appendAs("user:U2", `{"text":"bob here","user_id":"U2","user_name":"Bob"}`)
	for _, a := range []store.Author{"user:U1", "user:U2"} {
		_, err = st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: w.conv.ID, Author: a, Joined: store.JoinWrote, Now: clk.Now()})
		noErr(t, err, "%s joins", a)
	}
	return w
}

func entryOf(t *testing.T, st store.Store, conv, id uuid.UUID) *store.Entry {
	t.Helper()
	es, err := st.EntryList(ctxFor(t), &store.EntryListParams{ConversationID: conv})
	noErr(t, err, "listing entries")
	for _, e := range es {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("entry %s is gone from the log", id)
	return nil
}

func jsonField(t *testing.T, raw json.RawMessage, key string) any {
	t.Helper()
	var m map[string]any
	noErr(t, json.Unmarshal(raw, &m), "reading content %s", raw)
	return m[key]
}

// testForgetPerson: forgetting Ana (named by her merged-away record) takes
// every listed thing of hers, keeps what she wrote under "deleted user",
// and leaves Bob as he was.
func (s suite) testForgetPerson(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	w := setUpForget(t, st, clk)

	res, err := st.PersonForget(ctx, &store.PersonForgetParams{PersonID: w.anaOld.ID, By: "operator", Now: clk.Advance(time.Minute)})
	noErr(t, err, "forgetting Ana")
	want := store.PersonForgetResult{People: 2, Identities: 2, Entries: 2, APIKeys: 1, Logins: 1, Connections: 1, Pairings: 1, Grants: 1, Notes: 1, Memberships: 1}
	if *res != want {
		t.Fatalf("forgetting Ana: want %+v, got %+v", want, *res)
	}

	for _, id := range []uuid.UUID{w.ana.ID, w.anaOld.ID} {
		_, err = st.PersonGet(ctx, id)
		errIs(t, err, store.ErrNotFound, "reading a forgotten record")
	}
	for _, id := range []store.Identity{slackAna, discordAna} {
		_, err = st.PersonFind(ctx, &store.PersonFindParams{Identity: id})
		errIs(t, err, store.ErrNotFound, "finding the person of %+v", id)
	}
	e := entryOf(t, st, w.conv.ID, w.anaEntry)
	eq(t, e.Author, store.DeletedUser, "the author of Ana's message")
	eq(t, jsonField(t, e.Content, "text"), any("my secret plan"), "the text of Ana's message, kept")
	eq(t, jsonField(t, e.Content, "user_id"), any(store.DeletedUserID), "the user id in Ana's message")
	eq(t, jsonField(t, e.Content, "user_name"), any(store.DeletedUserName), "the name in Ana's message")
	api := entryOf(t, st, w.conv.ID, w.anaAPIEntry)
	eq(t, api.Author, store.DeletedUser, "the author of what Ana wrote in the console")
	isTrue(t, !strings.Contains(string(api.Content), "user_id"), "no user id is added where there was none: %s", api.Content)
	bob := entryOf(t, st, w.conv.ID, w.bobEntry)
	eq(t, bob.Author, store.Author("user:U2"), "Bob's message's author")
	eq(t, jsonField(t, bob.Content, "user_name"), any("Bob"), "Bob's name in his message")
	ps, err := st.ParticipantList(ctx, w.conv.ID)
	noErr(t, err, "listing participants")
	eq(t, len(ps), 1, "participants left")
	eq(t, ps[0].Author, store.Author("user:U2"), "the participant left")

	keys, err := st.KeyList(ctx, &store.KeyListParams{IncludeRevoked: true})
	noErr(t, err, "listing keys")
	eq(t, len(keys), 1, "keys left")
	eq(t, *keys[0].PersonID, w.bob.ID, "the key left is Bob's")
	conns, err := st.ConnectionList(ctx, &store.ConnectionListParams{})
	noErr(t, err, "listing connections")
	eq(t, len(conns), 1, "connections left")
	eq(t, *conns[0].Owner.PersonID, w.bob.ID, "the connection left is Bob's")
	_, err = st.PairingFind(ctx, &store.PairingFindParams{Platform: "slack", UserID: "U1"})
	errIs(t, err, store.ErrNotFound, "Ana's pairing")
	_, err = st.PairingFind(ctx, &store.PairingFindParams{Platform: "slack", UserID: "U2"})
	noErr(t, err, "Bob's pairing")
	grants, err := st.GrantList(ctx, &store.GrantListParams{Revoked: true})
	noErr(t, err, "listing grants")
	eq(t, len(grants), 1, "grants left")
	eq(t, grants[0].GrantedBy, "U2", "the grant left is Bob's")
	_, err = st.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: w.team.ID, PersonID: w.ana.ID})
	errIs(t, err, store.ErrNotFound, "Ana's membership of Bob's team")
	m, err := st.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: w.anaTeam.ID, PersonID: w.ana.ID})
	noErr(t, err, "the ownership of Ana's team stays with the workspace")
	eq(t, m.Role, store.RoleOwner, "the owner's row")
	_, err = st.PersonGet(ctx, w.bob.ID)
	noErr(t, err, "Bob is still there")

	// The audit says what went, and nothing of hers but the id.
	rows, err := st.AuditList(ctx, &store.AuditListParams{Action: store.AuditForgetPerson})
	noErr(t, err, "listing the audit")
	eq(t, len(rows), 1, "audit rows of the forget")
	eq(t, rows[0].Actor, "operator", "who forgot")
	for _, secret := range []string{"Ana", "U1", "111", "secret"} {
		isTrue(t, !strings.Contains(string(rows[0].Detail), secret), "the audit holds %q: %s", secret, rows[0].Detail)
	}
	isTrue(t, strings.Contains(string(rows[0].Detail), `"entries":2`), "the audit counts the entries: %s", rows[0].Detail)

	// Again: nothing left to change, and no error.
	again, err := st.PersonForget(ctx, &store.PersonForgetParams{PersonID: w.ana.ID, Now: clk.Advance(time.Minute)})
	noErr(t, err, "forgetting Ana again")
	if *again != (store.PersonForgetResult{}) {
		t.Fatalf("forgetting Ana again: want nothing changed, got %+v", *again)
	}
	e = entryOf(t, st, w.conv.ID, w.anaEntry)
	eq(t, jsonField(t, e.Content, "text"), any("my secret plan"), "the text after a second forget")
	_, err = st.PersonForget(ctx, &store.PersonForgetParams{PersonID: uuid.New(), Now: clk.Now()})
	noErr(t, err, "forgetting someone never known")
}

// testForgetDeletesMessages: with DeleteMessages the text of what the
// person wrote goes too; others' messages stay as they were.
func (s suite) testForgetDeletesMessages(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	w := setUpForget(t, st, clk)
	other := newConversation(t, st, clk) // no entry of Ana's
	rev := getConversation(t, st, w.conv.ID).ContentRev

	_, err := st.PersonForget(ctx, &store.PersonForgetParams{PersonID: w.ana.ID, DeleteMessages: true, Now: clk.Advance(time.Minute)})
	noErr(t, err, "forgetting Ana with her messages")
	// A stream's cache of the conversation's entries is stale now; one of a
	// conversation she never wrote in is not.
	eq(t, getConversation(t, st, w.conv.ID).ContentRev, rev+1, "the content revision of a conversation whose entries were rewritten")
	eq(t, getConversation(t, st, other.ID).ContentRev, int64(0), "the content revision of a conversation with no entry of hers")
	for _, id := range []uuid.UUID{w.anaEntry, w.anaAPIEntry} {
		e := entryOf(t, st, w.conv.ID, id)
		eq(t, e.Author, store.DeletedUser, "the author of Ana's entry")
		var got map[string]any
		noErr(t, json.Unmarshal(e.Content, &got), "reading %s", e.Content)
		if len(got) != 2 || got["text"] != store.RedactedText || got["redacted"] != true {
			t.Fatalf("Ana's message after a forget with DeleteMessages: want {text: %q, redacted: true}, got %s", store.RedactedText, e.Content)
		}
	}
	bob := entryOf(t, st, w.conv.ID, w.bobEntry)
	eq(t, jsonField(t, bob.Content, "text"), any("bob here"), "Bob's text")
	rows, err := st.AuditList(ctx, &store.AuditListParams{Action: store.AuditForgetPerson})
	noErr(t, err, "listing the audit")
	isTrue(t, strings.Contains(string(rows[0].Detail), `"delete_messages":true`), "the audit says the messages went: %s", rows[0].Detail)
}
