// Package storetest is the conformance suite every store driver runs: the
// contract written in store.Store's doc comments, checked against a real
// database. A driver's tests call Run (and its benchmarks call Bench) with a
// Harness that makes fresh, migrated, empty stores.
//
// Tests never read the wall clock for store time: every params struct carries
// Now, and each test drives a controllable clock, so lease expiry, retry
// backoff and approval expiry are tested without sleeping. Each subtest gets
// its own store and runs in parallel with the others.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
)

// Harness tells the suite how to make stores of one driver.
type Harness struct {
	// Name is the driver's name, "postgres" or "sqlite"; it shows in messages.
	Name string
	// New returns a fresh, migrated, empty store that tb's cleanup closes.
	New func(tb testing.TB) store.Store
	// NewRawInserter returns a func doing one raw single-row INSERT of an
	// entry-sized row into a scratch table it creates: the baseline the append
	// benchmark is measured against. Optional; without it the baseline is
	// skipped.
	NewRawInserter func(tb testing.TB, s store.Store) func(ctx context.Context) error
	// SkipConcurrency, when non-empty, is why the heavy concurrency tests are
	// skipped for this driver.
	SkipConcurrency string
	// TransientFault, when set, runs the transient-fault tests. It returns a
	// fresh store, with the driver's retries on or off as retry says, and
	// inject, which makes the store's next call meet a transient fault of
	// the driver's database (Postgres: the store's connections are
	// terminated; SQLite: another connection holds the write lock) until the
	// end func it returns is called. Optional.
	TransientFault func(tb testing.TB, retry bool) (s store.Store, inject func() (end func()))
	// SchemaDatabase, when set, runs the schema compatibility tests. It
	// makes a fresh, empty database and returns open, which opens a store
	// on that database that ships ms in place of the shipped migrations
	// and records binary as its version (the driver's BinaryVersion);
	// tb's cleanup closes the stores. Optional.
	SchemaDatabase func(tb testing.TB) (open func(ms []migrations.Migration, binary string) store.Store)
}

func (h Harness) validate() error {
	if h.Name == "" {
		return errors.New("storetest: Harness.Name is empty")
	}
	if h.New == nil {
		return errors.New("storetest: Harness.New is nil")
	}
	return nil
}

// suite is what every test function receives.
type suite struct {
	h Harness
}

// newStore makes a fresh store for one subtest.
func (s suite) newStore(t *testing.T) store.Store {
	t.Helper()
	st := s.h.New(t)
	if st == nil {
		t.Fatalf("%s: Harness.New returned a nil store", s.h.Name)
	}
	return st
}

func (s suite) skipHeavyConcurrency(t *testing.T) {
	t.Helper()
	if s.h.SkipConcurrency != "" {
		t.Skipf("%s: heavy concurrency test skipped: %s", s.h.Name, s.h.SkipConcurrency)
	}
}

// Run runs the conformance suite against h's stores.
func Run(t *testing.T, h Harness) {
	if err := h.validate(); err != nil {
		t.Fatal(err)
	}
	s := suite{h: h}
	groups := []struct {
		name  string
		tests []namedTest
	}{
		{"Migrations", s.migrationTests()},
		{"SchemaCompatibility", s.schemaTests()},
		{"Conversations", s.conversationTests()},
		{"Entries", s.entryTests()},
		{"Work", s.workTests()},
		{"WorkOrdering", s.orderingTests()},
		{"Recovery", s.recoveryTests()},
		{"Inbound", s.inboundTests()},
		{"Notifications", s.notificationTests()},
		{"Bindings", s.bindingTests()},
		{"Approvals", s.approvalTests()},
		{"Grants", s.grantTests()},
		{"Records", s.recordTests()},
		{"NamedLeases", s.namedLeaseTests()},
		{"SyncCursors", s.syncCursorTests()},
		{"InstanceLeases", s.instanceLeaseTests()},
		{"TransientFaults", s.faultTests()},
		{"SlackInstallations", s.slackInstallationTests()},
		{"Keys", s.keyTests()},
		{"Workspaces", s.workspaceTests()},
		{"Audit", s.auditTests()},
		{"Access", s.accessTests()},
		{"People", s.peopleTests()},
		{"Usage", s.usageTests()},
		{"Personalities", s.personalityTests()},
		{"Skills", s.skillTests()},
		{"Participants", s.participantTests()},
		{"Stats", s.statsTests()},
		{"Notes", s.noteTests()},
		{"Summaries", s.summaryTests()},
		{"TurnContext", s.turnContextTests()},
		{"Connections", s.connectionTests()},
		{"MCPGrants", s.mcpGrantTests()},
		{"SideThreads", s.sideThreadTests()},
		{"Runs", s.runTests()},
		{"RunMessages", s.runMessageTests()},
		{"CardChoices", s.cardChoiceTests()},
		{"History", s.historyTests()},
		{"Logins", s.loginTests()},
		{"Retention", s.retentionTests()},
		{"Budgets", s.budgetTests()},
		{"SSO", s.ssoTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.fn(t)
				})
			}
		})
	}
}

type namedTest struct {
	name string
	fn   func(t *testing.T)
}

// ---- clock ----

// clock is the test's notion of now: a fixed base plus whatever the test has
// advanced it by. The base has whole microseconds (the precision stores keep)
// and lies years away from the wall clock, so a driver that reads the
// database's own now() instead of the caller's Now is caught.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2031, time.March, 4, 5, 6, 7, 123456000, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new now.
func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// ---- assertions ----
//
// Small require-style helpers: each stops the test with a message saying what
// was expected, what came back and what was being checked.

func noErr(t testing.TB, err error, doing string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", fmt.Sprintf(doing, args...), err)
	}
}

func errIs(t testing.TB, err, want error, doing string, args ...any) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: want an error matching %v, got %v", fmt.Sprintf(doing, args...), want, err)
	}
}

func eq[T comparable](t testing.TB, got, want T, what string, args ...any) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: want %v, got %v", fmt.Sprintf(what, args...), want, got)
	}
}

func deepEq(t testing.TB, got, want any, what string, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nwant %#v\n got %#v", fmt.Sprintf(what, args...), want, got)
	}
}

func isTrue(t testing.TB, cond bool, what string, args ...any) {
	t.Helper()
	if !cond {
		t.Fatalf("%s", fmt.Sprintf(what, args...))
	}
}

// timeEq checks an instant and that it comes back in UTC.
func timeEq(t testing.TB, got, want time.Time, what string, args ...any) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s: want %s, got %s", fmt.Sprintf(what, args...), want.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano))
	}
	if got.Location() != time.UTC {
		t.Fatalf("%s: want the time in UTC, got location %q", fmt.Sprintf(what, args...), got.Location())
	}
}

func timePtrEq(t testing.TB, got *time.Time, want time.Time, what string, args ...any) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: want %s, got nil", fmt.Sprintf(what, args...), want.Format(time.RFC3339Nano))
	}
	timeEq(t, *got, want, what, args...)
}

// jsonEq compares JSON by value: Postgres's jsonb reorders keys and drops
// whitespace, and that is not a change of content.
func jsonEq(t testing.TB, got, want json.RawMessage, what string, args ...any) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: got invalid JSON %q: %v", fmt.Sprintf(what, args...), got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: the test's own JSON %q is invalid: %v", fmt.Sprintf(what, args...), want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: want JSON %s, got %s", fmt.Sprintf(what, args...), want, got)
	}
}

func uuidPtrEq(t testing.TB, got *uuid.UUID, want uuid.UUID, what string, args ...any) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: want %s, got nil", fmt.Sprintf(what, args...), want)
	}
	eq(t, *got, want, what, args...)
}

func seqEq(t testing.TB, got *int64, want int64, what string, args ...any) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: want seq %d, got nil", fmt.Sprintf(what, args...), want)
	}
	eq(t, *got, want, what, args...)
}

// ---- fixtures ----

func ptr[T any](v T) *T { return &v }

func ctxFor(t testing.TB) context.Context {
	return t.Context()
}

func content(format string, args ...any) json.RawMessage {
	b, err := json.Marshal(map[string]string{"text": fmt.Sprintf(format, args...)})
	if err != nil {
		panic(err)
	}
	return b
}

func newConversation(t testing.TB, s store.Queries, clk *clock) *store.Conversation {
	t.Helper()
	c, err := s.ConversationCreate(ctxFor(t), &store.ConversationCreateParams{
		Title:    "test",
		Provider: "scripted",
		Model:    "m1",
		Now:      clk.Now(),
	})
	noErr(t, err, "creating a conversation")
	return c
}

// appendN appends n user/assistant entries with ExpectSeq nil and returns them.
func appendN(t testing.TB, s store.Queries, clk *clock, convID uuid.UUID, n int) []*store.Entry {
	t.Helper()
	out := make([]*store.Entry, 0, n)
	for i := range n {
		kind := store.EntryUser
		if i%2 == 1 {
			kind = store.EntryAssistant
		}
		res, err := s.EntryAppend(ctxFor(t), &store.EntryAppendParams{
			ConversationID: convID,
			Kind:           kind,
			Author:         "user:u1",
			Content:        content("message %d", i+1),
			Now:            clk.Now(),
		})
		noErr(t, err, "appending entry %d to %s", i+1, convID)
		isTrue(t, !res.Forked, "an append with ExpectSeq nil must never fork")
		out = append(out, res.Entry)
	}
	return out
}

func listEntries(t testing.TB, s store.Queries, p store.EntryListParams) []*store.Entry {
	t.Helper()
	es, err := s.EntryList(ctxFor(t), &p)
	noErr(t, err, "listing entries %+v", p)
	return es
}

// seqsOf renders entries as their seqs, "e" for an error entry, for messages
// that show a whole log at a glance.
func seqsOf(es []*store.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		if e.Seq == nil {
			out[i] = "e@" + fmt.Sprint(e.AfterSeq)
		} else {
			out[i] = fmt.Sprint(*e.Seq)
		}
	}
	return out
}

func wantSeqs(from, to int64) []string {
	out := []string{}
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// sameEntry checks that got carries want's content (a seeded copy in a fork,
// or the entry read back), ignoring ids and the conversation.
func sameEntry(t testing.TB, got, want *store.Entry, what string, args ...any) {
	t.Helper()
	w := fmt.Sprintf(what, args...)
	eq(t, got.SeqValue(), want.SeqValue(), "%s: seq", w)
	eq(t, got.Kind, want.Kind, "%s: kind", w)
	eq(t, got.Author, want.Author, "%s: author", w)
	jsonEq(t, got.Content, want.Content, "%s: content", w)
}

func getConversation(t testing.TB, s store.Queries, id uuid.UUID) *store.Conversation {
	t.Helper()
	c, err := s.ConversationGet(ctxFor(t), id)
	noErr(t, err, "getting conversation %s", id)
	return c
}

// holdLease takes conv's lease for owner the way the engine does, by
// claiming a work item of the conversation (of a kind of its own, so no
// other claim takes it); ErrConflict when the claim could not take it.
func holdLease(ctx context.Context, st store.Queries, conv uuid.UUID, owner string, ttl time.Duration, at time.Time) (*store.Conversation, error) {
	kind := "lease-" + uuid.NewString()
	if _, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind, ConversationID: &conv, Now: at}); err != nil {
		return nil, err
	}
	items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: owner, Kinds: []string{kind}, Limit: 1, LeaseTTL: ttl, Now: at})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: the claim by %s did not take conversation %s", store.ErrConflict, owner, conv)
	}
	return st.ConversationGet(ctx, conv)
}
