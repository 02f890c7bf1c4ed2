package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/memory"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

var t0 = time.Date(2031, time.March, 4, 5, 6, 7, 0, time.UTC)

// fixedNow is a clock tests move by hand.
type fixedNow struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedNow) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedNow) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

func agents() *config.Config {
	return &config.Config{Agents: []config.Agent{
		{Name: "atlas", Family: "travel"}, {Name: "scout", Family: "travel"}, {Name: "ledger"},
	}}
}

func newMemory(t testing.TB, st store.Store, o memory.Options) *memory.Memory {
	t.Helper()
	o.Store, o.Agents = st, agents()
	if o.Logger == nil {
		o.Logger = testenv.Logger(t)
	}
	m, err := memory.New(o)
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}
	return m
}

func newConversation(t testing.TB, st store.Store) *store.Conversation {
	t.Helper()
	a, err := st.AgentUpsert(context.Background(), &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.ConversationCreate(context.Background(), &store.ConversationCreateParams{AgentID: &a.ID, Title: "t", Provider: "scripted", Model: "m", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func note(t testing.TB, st store.Store, p store.NoteCreateParams) *store.Note {
	t.Helper()
	if p.Now.IsZero() {
		p.Now = t0
	}
	n, err := st.NoteCreate(context.Background(), &p)
	if err != nil {
		t.Fatalf("creating note %q: %v", p.Text, err)
	}
	return n
}

// The layers of one turn: pinned notes and the conversation's own at once,
// the background from the latest message's words, the family's notes
// without the one repeating the conversation, nothing of another agent's,
// another workspace's or an unrelated note.
func TestForTurnLayers(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		conv := newConversation(t, st)
		ws, other := uuid.New(), uuid.New()
		note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, WorkspaceID: &ws, Pinned: true, Text: "Always answer in British English."})
		note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeConversation, ConversationID: &conv.ID, WorkspaceID: &ws, Text: "Ana prefers aisle seats."})
		note(t, st, store.NoteCreateParams{Agent: "scout", Family: "travel", Scope: store.NoteScopeFamily, WorkspaceID: &ws, Text: "ana prefers AISLE seats"})
		note(t, st, store.NoteCreateParams{Agent: "scout", Family: "travel", Scope: store.NoteScopeFamily, WorkspaceID: &ws, Text: "The Lisbon office opens at nine.", Tags: []string{"lisbon"}})
		note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, WorkspaceID: &ws, Text: "Ana flew to Lisbon in March."})
		note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, WorkspaceID: &ws, Text: "The printer is on floor two."})
		note(t, st, store.NoteCreateParams{Agent: "scout", Family: "travel", Scope: store.NoteScopeAgent, WorkspaceID: &ws, Text: "Scout's own Lisbon note."})
		note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, WorkspaceID: &other, Text: "Another workspace's Lisbon note."})

		// A budget no loaded machine misses: this test is about the layers
		// (TestForTurnSkipsASlowSource is about the budget).
		m := newMemory(t, st, memory.Options{Config: memory.Config{Budget: 10 * time.Second}})
		text, err := m.ForTurn(ctx, &core.MemoryQuery{
			Agent: "atlas", AgentID: conv.AgentID, ConversationID: conv.ID, WorkspaceID: &ws,
			Latest: "Where should Ana sit on the Lisbon flight?",
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"Pinned notes:\n- Always answer in British English.",
			"Notes from this conversation:\n- Ana prefers aisle seats.",
			"Background from your notes:\n- Ana flew to Lisbon in March.",
			"Background from your family's notes (agents of your owner):\n- The Lisbon office opens at nine. [lisbon] (from scout)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the turn's memory lacks %q:\n%s", want, text)
			}
		}
		for _, not := range []string{"AISLE", "printer", "Scout's own", "Another workspace"} {
			if strings.Contains(text, not) {
				t.Errorf("the turn's memory has %q, which it must leave out:\n%s", not, text)
			}
		}

		// No message to key the background from: the near layers only.
		text, err = m.ForTurn(ctx, &core.MemoryQuery{Agent: "atlas", AgentID: conv.AgentID, ConversationID: conv.ID, WorkspaceID: &ws})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "Background") || !strings.Contains(text, "British English") {
			t.Errorf("memory without a message = %q; want the pinned and conversation notes only", text)
		}
	})
}

// slowSource answers only when the test ends, whatever its context says:
// a source stuck on a slow backend.
type slowSource struct {
	release chan struct{}
	called  chan struct{}
}

func (slowSource) Name() string { return "slow" }

func (s slowSource) Fetch(ctx context.Context, q *memory.Query) ([]memory.Snippet, error) {
	close(s.called)
	<-s.release
	return []memory.Snippet{{Text: "from the slow source"}}, nil
}

// A background source that misses the budget is skipped and logged; the
// turn's memory comes back when the budget is spent, with the near layers.
func TestForTurnSkipsASlowSource(t *testing.T) {
	st := testenv.SQLite(t)
	conv := newConversation(t, st)
	note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, Pinned: true, Text: "Pinned and always there."})
	var logs bytes.Buffer
	var mu sync.Mutex
	clock := clockwork.NewFakeClock()
	slow := slowSource{release: make(chan struct{}), called: make(chan struct{})}
	defer close(slow.release)
	m := newMemory(t, st, memory.Options{
		Clock: clock, Sources: []memory.Source{slow},
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)),
	})

	type answer struct {
		text string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		text, err := m.ForTurn(context.Background(), &core.MemoryQuery{Agent: "atlas", ConversationID: conv.ID, Latest: "anything at all"})
		done <- answer{text, err}
	}()
	<-slow.called
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("the budget's timer never started: %v", err)
	}
	clock.Advance(memory.DefaultBudget)
	var got answer
	select {
	case got = <-done:
	case <-ctx.Done():
		t.Fatal("ForTurn did not return once the budget was spent")
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	if strings.Contains(got.text, "slow source") || !strings.Contains(got.text, "Pinned and always there.") {
		t.Fatalf("memory = %q; want the pinned note without the slow source", got.text)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "missed the budget") || !strings.Contains(logs.String(), "source=slow") {
		t.Fatalf("the log does not say the slow source was skipped:\n%s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Decay with the fake clock: after four half-lives an unused note is
// archived (not deleted), a note used three times stays with a lower
// relevance, a pinned note stays whole.
func TestDecay(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		now := &fixedNow{t: t0}
		m := newMemory(t, st, memory.Options{Now: now.Now})
		unused := note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, Text: "unused"})
		used := note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, Text: "used"})
		pinned := note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, Text: "pinned", Pinned: true})
		other := note(t, st, store.NoteCreateParams{Agent: "ledger", Family: "default", Scope: store.NoteScopeAgent, Text: "another family's"})
		if _, err := st.NoteTouch(ctx, &store.NoteTouchParams{IDs: []uuid.UUID{used.ID}, Uses: 3, Now: t0}); err != nil {
			t.Fatal(err)
		}

		res, err := m.Decay(ctx, "travel")
		if err != nil {
			t.Fatal(err)
		}
		if res.Archived != 0 {
			t.Fatalf("a decay at once archived %d notes; want none", res.Archived)
		}
		now.Advance(4 * memory.DefaultHalfLife)
		res, err = m.Decay(ctx, "travel")
		if err != nil {
			t.Fatal(err)
		}
		if res.Archived != 1 || res.Rescored != 1 {
			t.Fatalf("decay after four half-lives = %+v; want 1 archived, 1 rescored", res)
		}
		get := func(id uuid.UUID) *store.Note {
			n, err := st.NoteGet(ctx, id)
			if err != nil {
				t.Fatalf("reading note %s (archived notes are kept): %v", id, err)
			}
			return n
		}
		if n := get(unused.ID); n.ArchivedAt == nil || n.Relevance >= memory.DefaultArchiveBelow {
			t.Errorf("the unused note = archived %v, relevance %v; want archived below %v", n.ArchivedAt, n.Relevance, memory.DefaultArchiveBelow)
		}
		// (1 + log2(4)) × 0.5^4 = 0.1875
		if n := get(used.ID); n.ArchivedAt != nil || n.Relevance < 0.18 || n.Relevance > 0.19 {
			t.Errorf("the used note = archived %v, relevance %v; want active at 0.1875", n.ArchivedAt, n.Relevance)
		}
		if n := get(pinned.ID); n.ArchivedAt != nil || n.Relevance != 1 {
			t.Errorf("the pinned note = archived %v, relevance %v; want untouched", n.ArchivedAt, n.Relevance)
		}
		if n := get(other.ID); n.ArchivedAt != nil {
			t.Errorf("another family's note was archived by travel's decay")
		}
	})
}

// Consolidation: repeats fold into the first (counting uses), notes with
// one key tag leave the newest active with a chain of supersedes, and
// notes other readers see are left alone.
func TestConsolidate(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		now := &fixedNow{t: t0}
		m := newMemory(t, st, memory.Options{Now: now.Now})
		ws := uuid.New()
		fam := func(text string, at time.Duration, tags ...string) *store.Note {
			return note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeFamily, WorkspaceID: &ws,
				Text: text, Tags: tags, Now: t0.Add(at)})
		}
		first := fam("Ana prefers aisle seats.", 0)
		repeat := fam("ana prefers AISLE seats", time.Hour)
		b1 := fam("The offsite budget is 5000 euros.", 2*time.Hour, "key:budget")
		b2 := fam("The offsite budget is 6000 euros.", 3*time.Hour, "key:budget")
		b3 := fam("The offsite budget is 7000 euros.", 4*time.Hour, "key:budget")
		elsewhere := note(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeAgent, WorkspaceID: &ws, Text: "Ana prefers aisle seats."})

		res, err := m.Consolidate(ctx, "travel")
		if err != nil {
			t.Fatal(err)
		}
		if res.Folded != 1 || res.Superseded != 2 {
			t.Fatalf("consolidation = %+v; want 1 folded, 2 superseded", res)
		}
		get := func(n *store.Note) *store.Note {
			got, err := st.NoteGet(ctx, n.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if g := get(first); g.ArchivedAt != nil || g.Uses != 1 {
			t.Errorf("the first of the repeats = archived %v, uses %d; want kept with the repeat's use", g.ArchivedAt, g.Uses)
		}
		if g := get(repeat); g.ArchivedAt == nil {
			t.Errorf("the repeat stayed active")
		}
		if g := get(b3); g.ArchivedAt != nil || g.Supersedes == nil || *g.Supersedes != b2.ID {
			t.Errorf("the newest budget note = archived %v, supersedes %v; want active, superseding %s", g.ArchivedAt, g.Supersedes, b2.ID)
		}
		if g := get(b2); g.ArchivedAt == nil || g.Supersedes == nil || *g.Supersedes != b1.ID {
			t.Errorf("the middle budget note = archived %v, supersedes %v; want archived, superseding %s", g.ArchivedAt, g.Supersedes, b1.ID)
		}
		if g := get(b1); g.ArchivedAt == nil {
			t.Errorf("the oldest budget note stayed active")
		}
		if g := get(elsewhere); g.ArchivedAt != nil {
			t.Errorf("an agent note repeating a family note was archived; other readers see it")
		}
		// A second pass finds nothing left to do.
		if res, err = m.Consolidate(ctx, "travel"); err != nil || res.Folded+res.Superseded != 0 {
			t.Fatalf("a second consolidation = %+v, %v; want nothing done", res, err)
		}
	})
}

// The upkeep jobs enqueue one item per family and period, however often
// they run; the handlers run them from the worker.
func TestUpkeepJobs(t *testing.T) {
	st := testenv.SQLite(t)
	ctx := context.Background()
	now := &fixedNow{t: t0}
	m := newMemory(t, st, memory.Options{Now: now.Now})
	for range 2 {
		for _, j := range m.Jobs() {
			if err := j.Run(ctx); err != nil {
				t.Fatalf("running %s: %v", j.Name, err)
			}
		}
	}
	items, err := st.WorkList(ctx, &store.WorkListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, it := range items {
		count[it.Kind]++
	}
	// Two families (travel, default), once each for the period.
	if count[memory.WorkDecay] != 2 || count[memory.WorkConsolidate] != 2 {
		t.Fatalf("work enqueued = %v; want 2 %s and 2 %s", count, memory.WorkDecay, memory.WorkConsolidate)
	}
	hs := core.NewHandlers()
	m.AddHandlers(hs)
	for _, it := range items {
		if err := hs.Run(ctx, it); err != nil {
			t.Fatalf("running %s: %v", it.Kind, err)
		}
	}
	now.Advance(memory.DefaultDecayEvery)
	if err := m.Jobs()[0].Run(ctx); err != nil {
		t.Fatal(err)
	}
	items, _ = st.WorkList(ctx, &store.WorkListParams{Limit: 100})
	if len(items) != 6 {
		t.Fatalf("after the next decay period there are %d items; want 6", len(items))
	}
}

// memoryConfig reads the memory section of a whole switchboard.yaml as
// the app does: config.Parse decodes the file, ConfigFrom checks the
// section.
func memoryConfig(raw string) (memory.Config, error) {
	file, err := config.Parse("switchboard.yaml", []byte(raw), nil)
	if err != nil {
		return memory.Config{}, err
	}
	return memory.ConfigFrom(&file.Memory)
}

func TestConfigFrom(t *testing.T) {
	c, err := memoryConfig("agents: []\nmemory:\n  budget: 50ms\n  decay: {every: 1h, half_life: 48h, archive_below: 0.2}\n  consolidate: {every: 12h}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Budget != 50*time.Millisecond || c.Decay.Every != time.Hour || c.Decay.HalfLife != 48*time.Hour || c.Decay.ArchiveBelow != 0.2 || c.Consolidate.Every != 12*time.Hour {
		t.Fatalf("config = %+v", c)
	}
	if c, err := memoryConfig("agents: []\n"); err != nil || c != (memory.Config{}) {
		t.Fatalf("no memory section = %+v, %v; want the zero Config, which New fills with the defaults", c, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"memory:\n  budget: soon\n", `line 2: memory.budget: "soon" must be a duration`},
		{"memory:\n  budget: 1m\n", "memory.budget 1m must be between 1ms and 10s"},
		{"memory:\n  budget: -1s\n", "memory.budget -1s must be between 1ms and 10s"},
		{"memory:\n  budjet: 1s\n", `line 2: unknown field "budjet" in memory`},
		{"memory:\n  decay: {archive_below: 2}\n", "memory.decay.archive_below 2 must be between 0 and 1"},
		{"memory:\n  decay: {half_life: 30m}\n", "memory.decay.half_life 30m must be at least 1h"},
	} {
		if _, err := memoryConfig(tc.yaml); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want one saying %q", tc.yaml, err, tc.want)
		}
	}
}

func TestRepeats(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Ana prefers aisle seats.", "ana prefers AISLE seats", true},
		{"Ana prefers aisle seats on long flights", "Ana prefers aisle seats on long flights too", true},
		{"The budget is 5000 euros", "The budget is 7000 euros", false},
		{"yes", "no", false},
	} {
		if got := memory.Repeats(tc.a, tc.b); got != tc.want {
			t.Errorf("Repeats(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
