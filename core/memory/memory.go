// Package memory is what agents remember across conversations: notes they
// write with the remember tool and search with recall, assembled in layers
// at the start of every turn (core.Memory), and kept up by two durable
// upkeep jobs, decay and consolidation, that the scheduler's leader
// enqueues.
//
// The layers of one turn, nearest first:
//
//	pinned        the agent's pinned notes (and its family's, and this
//	              conversation's), loaded at once
//	conversation  this conversation's notes, loaded at once
//	background    a full-text search, keyed from the latest message, over
//	              the agent's and its family's notes, and over the
//	              summaries of its other conversations: every source runs
//	              in parallel under one time budget (Options.Budget); a
//	              source that misses it is left out of this turn and logged
//
// A background note that repeats a nearer one (see Repeats) is left out,
// so the family layer adds only what the conversation does not already
// say. The text goes in the per-turn block, after the history, so the
// prompt cache still covers everything before it.
package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// Options configures a Memory.
type Options struct {
	Store  store.Store
	Agents *config.Config // each agent's family
	// Config is the memory section of switchboard.yaml (budget, upkeep);
	// the zero value is the defaults.
	Config Config
	// Sources are searched in the background under the budget; default
	// NoteSource and SummarySource over Store.
	Sources []Source
	Logger  *slog.Logger
	// Clock times the budget; default the real clock.
	Clock clockwork.Clock
	// Now dates notes and upkeep; default Clock's time.
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Now == nil {
		o.Now = o.Clock.Now
	}
	o.Config.defaults()
	if o.Sources == nil && o.Store != nil {
		o.Sources = []Source{NoteSource{Store: o.Store}, SummarySource{Store: o.Store}}
	}
}

func (o *Options) validate() error {
	switch {
	case o.Store == nil:
		return errors.New("memory: Options.Store is required")
	case o.Agents == nil:
		return errors.New("memory: Options.Agents is required")
	}
	for i, s := range o.Sources {
		if s == nil {
			return fmt.Errorf("memory: Options.Sources[%d] is nil", i)
		}
	}
	return o.Config.validate()
}

// Memory assembles turns' memory, runs the memory tools and does upkeep.
type Memory struct {
	opts  Options
	st    store.Store
	log   *slog.Logger
	clock clockwork.Clock
}

var _ core.Memory = (*Memory)(nil)

// New validates opts and returns a Memory.
func New(opts Options) (*Memory, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Memory{opts: opts, st: opts.Store, log: opts.Logger, clock: opts.Clock}, nil
}

// Family is the family of the named agent (agent.DefaultFamily for one not
// declared).
func (m *Memory) Family(agentName string) string {
	if a, ok := m.opts.Agents.Find(agentName); ok {
		return a.FamilyName()
	}
	return config.DefaultFamily
}

// Families lists the declared agents' families, each once.
func (m *Memory) Families() []string {
	var out []string
	seen := map[string]bool{}
	for i := range m.opts.Agents.Agents {
		f := m.opts.Agents.Agents[i].FamilyName()
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// Bounds of the text one turn gets.
const (
	maxPinned       = 20
	maxConversation = 20
	maxBackground   = 8
	maxNoteChars    = 400
	maxSummaryChars = 600
)

// ForTurn assembles the memory of one turn (see the package comment).
func (m *Memory) ForTurn(ctx context.Context, q *core.MemoryQuery) (string, error) {
	query := &Query{MemoryQuery: *q, Family: m.Family(q.Agent)}
	log := m.log.With("agent", q.Agent, "conversation_id", q.ConversationID)

	// The background starts first, so it runs while the near layers load.
	bctx, cancel := clockwork.WithTimeout(ctx, m.clock, m.opts.Config.Budget)
	defer cancel()
	type result struct {
		source   string
		snippets []Snippet
		err      error
	}
	var sources []Source
	if q.Latest != "" {
		sources = m.opts.Sources
	}
	// Buffered: a source that ignores its context and returns late finds
	// room for its result and ends; nobody waits for it.
	results := make(chan result, len(sources))
	for _, src := range sources {
		go func() {
			s, err := src.Fetch(bctx, query)
			results <- result{src.Name(), s, err}
		}()
	}

	reader := query.Reader()
	var l layers
	pinned, err := m.st.NoteListPinned(ctx, &store.NoteListPinnedParams{Reader: reader, Limit: maxPinned})
	if err != nil {
		log.WarnContext(ctx, "reading pinned notes; this turn goes without", "error", redact.String(err.Error()))
	}
	l.add(layerPinned, snippetsOf(pinned))
	own, err := m.st.NoteList(ctx, &store.NoteListParams{ConversationID: &q.ConversationID, Limit: maxConversation})
	if err != nil {
		log.WarnContext(ctx, "reading the conversation's notes; this turn goes without", "error", redact.String(err.Error()))
	}
	l.add(layerConversation, snippetsOf(own))

	got := map[string][]Snippet{}
	collect := func(r result) {
		switch {
		case r.err == nil:
			got[r.source] = r.snippets
		case bctx.Err() != nil:
			log.WarnContext(ctx, "memory source missed the budget; left out of this turn", "source", r.source, "budget", m.opts.Config.Budget)
			got[r.source] = nil
		default:
			log.WarnContext(ctx, "memory source failed; left out of this turn", "source", r.source, "error", redact.String(r.err.Error()))
			got[r.source] = nil
		}
	}
	for pending := len(sources); pending > 0; {
		select {
		case r := <-results:
			pending--
			collect(r)
			continue
		case <-bctx.Done():
		}
		// The budget is spent: take what has arrived, skip the rest.
		for ; pending > 0; pending-- {
			select {
			case r := <-results:
				collect(r)
				continue
			default:
			}
			break
		}
		for _, src := range sources {
			if _, ok := got[src.Name()]; !ok {
				log.WarnContext(ctx, "memory source missed the budget; left out of this turn", "source", src.Name(), "budget", m.opts.Config.Budget)
			}
		}
		break
	}
	// In the order the sources are listed, so the text does not depend on
	// which answered first.
	for _, src := range sources {
		for _, s := range got[src.Name()] {
			l.add(s.Layer, []Snippet{s})
		}
	}
	return l.text(), nil
}

// layer is where a snippet shows in the turn's memory.
type layer int

const (
	layerPinned layer = iota
	layerConversation
	layerAgent
	layerFamily
	layerSummary
	layerCount
)

var layerTitles = [layerCount]string{
	layerPinned:       "Pinned notes:",
	layerConversation: "Notes from this conversation:",
	layerAgent:        "Background from your notes:",
	layerFamily:       "Background from your family's notes (agents of your owner):",
	layerSummary:      "From your other conversations:",
}

// layers collects a turn's snippets, each note once, leaving out the
// background that repeats a nearer layer.
type layers struct {
	by   [layerCount][]Snippet
	seen map[string]bool // note ids shown
}

func (l *layers) add(at layer, ss []Snippet) {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	for _, s := range ss {
		if s.NoteID != "" {
			if l.seen[s.NoteID] {
				continue
			}
			l.seen[s.NoteID] = true
		}
		if at >= layerAgent && at <= layerFamily && l.repeatsNearer(s.Text) {
			continue
		}
		if at >= layerAgent && len(l.by[at]) >= maxBackground {
			continue
		}
		l.by[at] = append(l.by[at], s)
	}
}

func (l *layers) repeatsNearer(text string) bool {
	for _, near := range [][]Snippet{l.by[layerPinned], l.by[layerConversation]} {
		for _, s := range near {
			if Repeats(s.Text, text) {
				return true
			}
		}
	}
	return false
}

func (l *layers) text() string {
	var b strings.Builder
	for at := range layerCount {
		if len(l.by[at]) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("What you remember (search with recall, add with remember):\n")
		}
		b.WriteString(layerTitles[at])
		b.WriteString("\n")
		for _, s := range l.by[at] {
			b.WriteString("- ")
			b.WriteString(s.line())
			b.WriteString("\n")
		}
	}
	return strings.TrimSpace(b.String())
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// now is the clock's time in UTC.
func (m *Memory) now() time.Time { return m.opts.Now().UTC() }
