package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Upkeep: two durable work items per family, enqueued by the scheduler's
// leader (see Jobs) and run by any worker.
//
//	memory_decay        rescore every active note; archive the faded ones
//	memory_consolidate  fold repeats, let the newer note on a subject
//	                    supersede the older
//
// Each is keyed by family and period, so a period's item is enqueued once
// however many instances lead in turn. Both only archive: a note is never
// deleted, and an archived note stays readable by id.

// Work kinds of the upkeep.
const (
	WorkDecay       = "memory_decay"
	WorkConsolidate = "memory_consolidate"
)

// DecayArgs are the args of a WorkDecay item.
type DecayArgs struct {
	Family string `json:"family"`
}

// Kind is WorkDecay.
func (DecayArgs) Kind() string { return WorkDecay }

// ConsolidateArgs are the args of a WorkConsolidate item.
type ConsolidateArgs struct {
	Family string `json:"family"`
}

// Kind is WorkConsolidate.
func (ConsolidateArgs) Kind() string { return WorkConsolidate }

// AddHandlers adds the upkeep's handlers to hs, for core's worker.
func (m *Memory) AddHandlers(hs *core.Handlers) {
	core.AddHandler(hs, func(ctx context.Context, _ *store.WorkItem, a DecayArgs) error {
		_, err := m.Decay(ctx, a.Family)
		return err
	})
	core.AddHandler(hs, func(ctx context.Context, _ *store.WorkItem, a ConsolidateArgs) error {
		_, err := m.Consolidate(ctx, a.Family)
		return err
	})
}

// Job is periodic work for the scheduler's leader (scheduler.Job has the
// same shape; the app converts).
type Job struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Jobs are the upkeep's periodic jobs: each enqueues its work item for
// every family, keyed by the period, so an item is never doubled.
func (m *Memory) Jobs() []Job {
	return []Job{
		{Name: "memory decay", Every: m.opts.Config.Decay.Every, Run: func(ctx context.Context) error {
			return m.enqueue(ctx, m.opts.Config.Decay.Every, func(f string) core.WorkArgs { return DecayArgs{Family: f} })
		}},
		{Name: "memory consolidate", Every: m.opts.Config.Consolidate.Every, Run: func(ctx context.Context) error {
			return m.enqueue(ctx, m.opts.Config.Consolidate.Every, func(f string) core.WorkArgs { return ConsolidateArgs{Family: f} })
		}},
	}
}

func (m *Memory) enqueue(ctx context.Context, every time.Duration, args func(family string) core.WorkArgs) error {
	now := m.now()
	period := now.Truncate(every).UnixMicro()
	var errs []error
	for _, f := range m.Families() {
		a := args(f)
		key := fmt.Sprintf("%s:%s:%d", a.Kind(), f, period)
		if _, err := core.Enqueue(ctx, m.st, a, &core.EnqueueOpts{UniqueKey: &key, Now: now}); err != nil {
			errs = append(errs, fmt.Errorf("enqueueing %s of family %s: %w", a.Kind(), f, err))
		}
	}
	return errors.Join(errs...)
}

// Relevance is how much a note still matters at now: it halves for every
// HalfLife the note goes unused (since it was last recalled, or made when
// never), and each use makes it weigh more, by the base-2 log of its uses
// plus one:
//
//	relevance = (1 + log2(1 + uses)) × 0.5^(idle / half_life)
//
// A new note has 1; a note never used falls under the default threshold
// (0.1) after about 3.3 half-lives (100 days by default), one recalled
// three times after about 4.6.
func Relevance(n *store.Note, now time.Time, halfLife time.Duration) float64 {
	ref := n.CreatedAt
	if n.LastUsedAt != nil && n.LastUsedAt.After(ref) {
		ref = *n.LastUsedAt
	}
	idle := max(now.Sub(ref), 0)
	weight := 1 + math.Log2(1+float64(n.Uses))
	return weight * math.Pow(0.5, float64(idle)/float64(halfLife))
}

// DecayResult counts what a decay pass did.
type DecayResult struct {
	Rescored int
	Archived int
}

// upkeepPage is how many notes upkeep reads at a time.
const upkeepPage = 500

// Decay rescores the family's active notes and archives those whose
// relevance fell below the threshold. Pinned notes never decay.
func (m *Memory) Decay(ctx context.Context, family string) (*DecayResult, error) {
	cfg := m.opts.Config.Decay
	res := &DecayResult{}
	now := m.now()
	err := m.eachNote(ctx, family, func(n *store.Note) error {
		if n.Pinned {
			return nil
		}
		r := Relevance(n, now, cfg.HalfLife)
		if r < cfg.ArchiveBelow {
			if err := m.st.NoteRescore(ctx, &store.NoteRescoreParams{ID: n.ID, Relevance: r}); err != nil {
				return err
			}
			if _, err := m.st.NoteArchive(ctx, &store.NoteArchiveParams{ID: n.ID, Now: now}); err != nil {
				return err
			}
			res.Archived++
			return nil
		}
		if math.Abs(r-n.Relevance) < 1e-3 {
			return nil
		}
		res.Rescored++
		return m.st.NoteRescore(ctx, &store.NoteRescoreParams{ID: n.ID, Relevance: r})
	})
	if err != nil {
		return res, fmt.Errorf("decaying the notes of family %s: %w", family, err)
	}
	if res.Archived > 0 {
		m.log.InfoContext(ctx, "memory decay archived notes", "family", family, "archived", res.Archived, "rescored", res.Rescored)
	}
	return res, nil
}

// eachNote runs fn on every active note of the family, in creation order.
func (m *Memory) eachNote(ctx context.Context, family string, fn func(n *store.Note) error) error {
	var after uuid.UUID
	for {
		page, err := m.st.NoteList(ctx, &store.NoteListParams{Family: family, After: after, Limit: upkeepPage})
		if err != nil {
			return err
		}
		for _, n := range page {
			if err := fn(n); err != nil {
				return err
			}
		}
		if len(page) < upkeepPage {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// ConsolidateResult counts what a consolidation pass did.
type ConsolidateResult struct {
	Folded     int // repeats archived into the note kept
	Superseded int // older notes on a subject archived under the newer
}

// KeyTagPrefix marks a note's subject: of two notes with the same key tag
// that the same readers see, the newer says what holds now.
const KeyTagPrefix = "key:"

// Consolidate merges the family's active notes, among the notes the same
// readers see (same workspace, scope, and agent or conversation for those
// scopes), in two deterministic steps:
//
//  1. Contradictions: notes with the same key tag (key:SUBJECT, the first
//     one a note has) are ordered by creation; each older one is archived
//     and the next newer one supersedes it, so only the newest stays
//     active, linked back through the older ones.
//  2. Repeats (see Repeats): of notes saying the same thing, the first
//     made is kept (a pinned one before any other) and the others are
//     archived into it: it is counted as used once for each, plus their
//     own uses.
func (m *Memory) Consolidate(ctx context.Context, family string) (*ConsolidateResult, error) {
	groups := map[string][]*store.Note{}
	var order []string
	err := m.eachNote(ctx, family, func(n *store.Note) error {
		k := readersOf(n)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("consolidating the notes of family %s: %w", family, err)
	}
	res := &ConsolidateResult{}
	for _, k := range order {
		if err := m.consolidate(ctx, groups[k], res); err != nil {
			return res, fmt.Errorf("consolidating the notes of family %s: %w", family, err)
		}
	}
	if res.Folded+res.Superseded > 0 {
		m.log.InfoContext(ctx, "memory consolidated", "family", family, "folded", res.Folded, "superseded", res.Superseded)
	}
	return res, nil
}

// readersOf names who reads a note: notes are merged only with the notes
// the same readers see.
func readersOf(n *store.Note) string {
	ws := "none"
	if n.WorkspaceID != nil {
		ws = n.WorkspaceID.String()
	}
	switch n.Scope {
	case store.NoteScopeAgent:
		return ws + "/agent/" + n.Agent
	case store.NoteScopeConversation:
		return ws + "/conversation/" + n.ConversationID.String()
	}
	return ws + "/family"
}

func keyOf(n *store.Note) string {
	for _, t := range n.Tags {
		if strings.HasPrefix(t, KeyTagPrefix) && len(t) > len(KeyTagPrefix) {
			return strings.ToLower(t)
		}
	}
	return ""
}

// consolidate merges one group of notes, in creation order.
func (m *Memory) consolidate(ctx context.Context, notes []*store.Note, res *ConsolidateResult) error {
	now := m.now()
	byKey := map[string][]*store.Note{}
	for _, n := range notes {
		if k := keyOf(n); k != "" {
			byKey[k] = append(byKey[k], n)
		}
	}
	gone := map[uuid.UUID]bool{}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		same := byKey[k]
		for i := 0; i+1 < len(same); i++ {
			newer := same[i+1].ID
			if _, err := m.st.NoteArchive(ctx, &store.NoteArchiveParams{ID: same[i].ID, SupersededBy: &newer, Now: now}); err != nil {
				return err
			}
			gone[same[i].ID] = true
			res.Superseded++
		}
	}
	var kept []*store.Note
	for _, n := range notes {
		if gone[n.ID] {
			continue
		}
		i := slices.IndexFunc(kept, func(k *store.Note) bool { return Repeats(k.Text, n.Text) })
		if i < 0 {
			kept = append(kept, n)
			continue
		}
		keep, fold := kept[i], n
		if fold.Pinned && !keep.Pinned {
			keep, fold = fold, keep
			kept[i] = keep
		}
		if _, err := m.st.NoteArchive(ctx, &store.NoteArchiveParams{ID: fold.ID, Now: now}); err != nil {
			return err
		}
		if _, err := m.st.NoteTouch(ctx, &store.NoteTouchParams{IDs: []uuid.UUID{keep.ID}, Uses: fold.Uses + 1, Now: now}); err != nil {
			return err
		}
		res.Folded++
	}
	return nil
}
