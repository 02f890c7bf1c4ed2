package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) migrationTests() []namedTest {
	return []namedTest{
		{"MigrateIsIdempotent", s.testMigrateIdempotent},
		{"Ping", s.testPing},
	}
}

func (s suite) testMigrateIdempotent(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)

	applied, latest, err := st.SchemaVersion(ctx)
	noErr(t, err, "reading the schema version of a migrated store")
	isTrue(t, latest > 0, "the binary must ship at least one migration, latest = %d", latest)
	eq(t, applied, latest, "applied schema version of a fresh migrated store")

	for i := range 2 {
		v, err := st.Migrate(ctx)
		noErr(t, err, "migrating an already migrated store (run %d)", i+1)
		eq(t, v, latest, "version returned by a no-op Migrate (run %d)", i+1)
	}
	applied2, latest2, err := st.SchemaVersion(ctx)
	noErr(t, err, "reading the schema version after re-migrating")
	eq(t, applied2, applied, "applied version after a no-op Migrate")
	eq(t, latest2, latest, "latest version after a no-op Migrate")
}

func (s suite) testPing(t *testing.T) {
	st := s.newStore(t)
	noErr(t, st.Ping(ctxFor(t)), "pinging a fresh store")
	eq(t, st.Dialect(), s.h.Name, "Dialect() of the %s store", s.h.Name)
}

func (s suite) conversationTests() []namedTest {
	return []namedTest{
		{"CreateGet", s.testConversationCreateGet},
		{"NotFound", s.testConversationNotFound},
		{"TimestampsUTCMicros", s.testConversationTimestamps},
		{"SetStatus", s.testConversationSetStatus},
		{"Lease", s.testConversationLease},
		{"ExpiredLeases", s.testConversationExpiredLeases},
		{"ListByWorkspace", s.testConversationList},
		{"TitleFromFirstMessage", s.testConversationTitleFromMessage},
		{"ForkTitleFromEditedFirstMessage", s.testConversationForkRetitle},
	}
}

func (s suite) testConversationCreateGet(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()

	agent, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "helper", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "upserting the agent the conversation points at")

	id := uuid.New()
	meta := json.RawMessage(`{"slack": {"team": "T1", "thread": "171.22"}, "tags": ["a", "b"], "n": 3}`)
	created, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{
		ID:       id,
		AgentID:  &agent.ID,
		Title:    "Quarterly numbers",
		Provider: "anthropic",
		Model:    "claude-sonnet-4-5",
		Thinking: "high",
		Metadata: meta,
		Now:      clk.Now(),
	})
	noErr(t, err, "creating a conversation with a chosen id")
	eq(t, created.ID, id, "the id of a conversation created with ID set")

	got := getConversation(t, st, id)
	for _, c := range []*store.Conversation{created, got} {
		eq(t, c.ID, id, "conversation id")
		isTrue(t, c.ParentID == nil, "a root conversation has no parent, got %v", c.ParentID)
		eq(t, c.RootID, id, "a root conversation is its own root")
		isTrue(t, c.ForkSeq == nil, "a root conversation has no fork seq, got %v", c.ForkSeq)
		eq(t, c.ChildCount, 0, "child count of a new conversation")
		uuidPtrEq(t, c.AgentID, agent.ID, "agent id")
		eq(t, c.Title, "Quarterly numbers", "title")
		eq(t, c.Provider, "anthropic", "provider")
		eq(t, c.Model, "claude-sonnet-4-5", "model")
		eq(t, c.Thinking, "high", "thinking")
		eq(t, c.Status, store.ConversationIdle, "status of a new conversation")
		jsonEq(t, c.Metadata, meta, "metadata round trip")
		eq(t, c.LeaseOwner, "", "lease owner of a new conversation")
		isTrue(t, !c.LeaseHeld(clk.Now()), "a new conversation holds no lease")
		eq(t, c.TurnAttempts, 0, "turn attempts of a new conversation")
		eq(t, c.LastSeq, int64(0), "last seq of an empty conversation")
		timeEq(t, c.CreatedAt, clk.Now(), "created at")
		timeEq(t, c.UpdatedAt, clk.Now(), "updated at")
	}

	// Zero ID and nil metadata take defaults.
	c2, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Now()})
	noErr(t, err, "creating a conversation with every optional field empty")
	isTrue(t, c2.ID != uuid.Nil, "a conversation created with a zero ID must get a new id")
	isTrue(t, c2.ID != id, "a new conversation must not reuse another's id")
	got2 := getConversation(t, st, c2.ID)
	jsonEq(t, got2.Metadata, json.RawMessage(`{}`), "metadata of a conversation created with nil metadata")
	isTrue(t, got2.AgentID == nil, "agent id of a conversation created without one, got %v", got2.AgentID)

	// Creating the same id twice is refused.
	_, err = st.ConversationCreate(ctx, &store.ConversationCreateParams{ID: id, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "creating a conversation with an id that exists")
}

func (s suite) testConversationNotFound(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	unknown := uuid.New()

	_, err := st.ConversationGet(ctx, unknown)
	errIs(t, err, store.ErrNotFound, "getting an unknown conversation")
	_, err = st.ConversationSetStatus(ctx, &store.ConversationStatusParams{ConversationID: unknown, Status: store.ConversationPaused, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "setting the status of an unknown conversation")
	_, err = st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: unknown, Kind: store.EntryUser, Content: content("hi"), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "appending to an unknown conversation")
	_, err = st.EntryGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "getting an unknown entry")
}

func (s suite) testConversationTimestamps(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)

	// A caller's Now with nanoseconds, in a zone other than UTC: the store
	// keeps microseconds (truncated) and hands times back in UTC.
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	now := time.Date(2031, time.July, 8, 9, 10, 11, 123456789, zone)
	want := now.Truncate(time.Microsecond).UTC()

	c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: now})
	noErr(t, err, "creating a conversation at a time with nanoseconds")
	got := getConversation(t, st, c.ID)
	timeEq(t, got.CreatedAt, want, "created at read back (truncated to microseconds, UTC)")
	timeEq(t, got.UpdatedAt, want, "updated at read back (truncated to microseconds, UTC)")

	res, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Content: content("hi"), Now: now})
	noErr(t, err, "appending an entry at a time with nanoseconds")
	e, err := st.EntryGet(ctx, res.Entry.ID)
	noErr(t, err, "getting the entry back")
	timeEq(t, e.CreatedAt, want, "entry created at read back (truncated to microseconds, UTC)")
}

func (s suite) testConversationSetStatus(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	later := clk.Advance(time.Minute)
	got, err := st.ConversationSetStatus(ctx, &store.ConversationStatusParams{
		ConversationID: c.ID, Status: store.ConversationPaused, TurnAttempts: ptr(2), Now: later,
	})
	noErr(t, err, "pausing a conversation")
	eq(t, got.Status, store.ConversationPaused, "status returned after pausing")
	eq(t, got.TurnAttempts, 2, "turn attempts returned after setting them")
	timeEq(t, got.UpdatedAt, later, "updated at after a status change")

	// TurnAttempts nil leaves the count alone.
	_, err = st.ConversationSetStatus(ctx, &store.ConversationStatusParams{ConversationID: c.ID, Status: store.ConversationIdle, Now: clk.Now()})
	noErr(t, err, "setting a conversation idle")
	got = getConversation(t, st, c.ID)
	eq(t, got.Status, store.ConversationIdle, "status read back after setting idle")
	eq(t, got.TurnAttempts, 2, "turn attempts after a status change with TurnAttempts nil (must be unchanged)")
	timeEq(t, got.CreatedAt, c.CreatedAt, "created at must not change with the status")
}

func (s suite) testConversationLease(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	t0 := clk.Now()
	lease := func(owner string, at time.Time) (*store.Conversation, error) {
		return holdLease(ctx, st, c.ID, owner, 50*time.Second, at)
	}

	got, err := lease("a", t0)
	noErr(t, err, "taking a free conversation lease by a claim")
	eq(t, got.LeaseOwner, "a", "lease owner after the claim")
	timePtrEq(t, got.LeaseExpiresAt, t0.Add(50*time.Second), "lease expiry after the claim")
	isTrue(t, got.LeaseHeld(t0), "the lease must be held right after the claim")

	// Release by someone else is a no-op.
	noErr(t, st.ConversationLeaseRelease(ctx, &store.ConversationLeaseParams{ConversationID: c.ID, Owner: "b", Now: t0.Add(21 * time.Second)}), "releasing a lease one does not hold")
	got = getConversation(t, st, c.ID)
	eq(t, got.LeaseOwner, "a", "lease owner after another owner's release (must be unchanged)")

	// Once expired, anyone may take it.
	got, err = lease("b", t0.Add(51*time.Second))
	noErr(t, err, "acquiring an expired conversation lease")
	eq(t, got.LeaseOwner, "b", "lease owner after taking over an expired lease")

	noErr(t, st.ConversationLeaseRelease(ctx, &store.ConversationLeaseParams{ConversationID: c.ID, Owner: "b", Now: t0.Add(52 * time.Second)}), "releasing one's own lease")
	got = getConversation(t, st, c.ID)
	isTrue(t, !got.LeaseHeld(t0.Add(52*time.Second)), "the lease must be free after its owner released it, got owner %q until %v", got.LeaseOwner, got.LeaseExpiresAt)
	_, err = lease("a", t0.Add(53*time.Second))
	noErr(t, err, "claiming on a released lease")
}

func (s suite) testConversationExpiredLeases(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	t0 := clk.Now()
	short := newConversation(t, st, clk)
	long := newConversation(t, st, clk)
	free := newConversation(t, st, clk)
	_ = free

	_, err := holdLease(ctx, st, short.ID, "w1", 10*time.Second, t0)
	noErr(t, err, "taking the short lease")
	_, err = holdLease(ctx, st, long.ID, "w2", time.Hour, t0)
	noErr(t, err, "taking the long lease")

	expired, err := st.ConversationListExpiredLeases(ctx, &store.ConversationListExpiredLeasesParams{Now: t0.Add(5 * time.Second), Limit: 10})
	noErr(t, err, "listing expired leases before any expired")
	eq(t, len(expired), 0, "expired leases before any lease expired")

	expired, err = st.ConversationListExpiredLeases(ctx, &store.ConversationListExpiredLeasesParams{Now: t0.Add(11 * time.Second), Limit: 10})
	noErr(t, err, "listing expired leases")
	eq(t, len(expired), 1, "expired leases after the short one expired (the long one is live, the free one has none)")
	eq(t, expired[0].ID, short.ID, "the expired conversation")
	eq(t, expired[0].LeaseOwner, "w1", "owner of the expired lease")
}

// testConversationList: a caller sees the conversations of its workspaces
// only, most recently active first, page by page with no row twice.
func (s suite) testConversationList(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a, b := newTeam(t, st, clk, "A", uuid.New()), newTeam(t, st, clk, "B", uuid.New())
	var inA []uuid.UUID
	for i := range 5 {
		c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Advance(time.Second)})
		noErr(t, err, "creating conversation %d", i)
		ws := a.ID
		if i%2 == 1 {
			ws = b.ID
		} else {
			inA = append(inA, c.ID)
		}
		noErr(t, st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: ws}), "placing conversation %d", i)
	}
	_, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Advance(time.Second)})
	noErr(t, err, "creating a conversation outside any workspace")

	var got []uuid.UUID
	var before *store.ConversationCursor
	for range 5 {
		page, err := st.ConversationList(ctx, &store.ConversationListParams{Workspaces: []uuid.UUID{a.ID}, Before: before, Limit: 2})
		noErr(t, err, "listing workspace A")
		if len(page) == 0 {
			break
		}
		for _, c := range page {
			got = append(got, c.ID)
		}
		last := page[len(page)-1]
		before = &store.ConversationCursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	deepEq(t, got, []uuid.UUID{inA[2], inA[1], inA[0]}, "workspace A's conversations, newest first, over pages of 2")

	none, err := st.ConversationList(ctx, &store.ConversationListParams{})
	noErr(t, err, "listing with no workspace")
	eq(t, len(none), 0, "conversations listed for no workspace")
	every, err := st.ConversationList(ctx, &store.ConversationListParams{All: true})
	noErr(t, err, "listing every conversation")
	eq(t, len(every), 6, "conversations listed for the operator")
	_, err = st.ConversationList(ctx, &store.ConversationListParams{All: true, Limit: -1})
	errIs(t, err, store.ErrInvalid, "listing with a negative limit")
}
