package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func noteOf(r dbsqlc.Note) (*store.Note, error) {
	n := &store.Note{
		ID: r.ID, Agent: r.Agent, Family: r.Family, ConversationID: nullUUID(r.ConversationID), Scope: store.NoteScope(r.Scope),
		Text: r.Text, Pinned: r.Pinned != 0, Relevance: r.Relevance, Uses: int(r.Uses), LastUsedAt: nullMicros(r.LastUsedAt),
		CreatedAt: fromMicros(r.CreatedAt), ArchivedAt: nullMicros(r.ArchivedAt), Supersedes: nullUUID(r.Supersedes),
		WorkspaceID: nullUUID(r.WorkspaceID),
	}
	if err := json.Unmarshal([]byte(r.Tags), &n.Tags); err != nil {
		return nil, fmt.Errorf("decoding the tags of note %s: %w", r.ID, err)
	}
	if n.Tags == nil {
		n.Tags = []string{}
	}
	return n, nil
}

func notesOf(rows []dbsqlc.Note) ([]*store.Note, error) {
	out := make([]*store.Note, len(rows))
	for i, r := range rows {
		n, err := noteOf(r)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (q *queries) NoteCreate(ctx context.Context, p *store.NoteCreateParams) (*store.Note, error) {
	tags, err := json.Marshal(p.Tags)
	if err != nil {
		return nil, fmt.Errorf("encoding the tags of a note of %s: %w", p.Agent, err)
	}
	pinned := int64(0)
	if p.Pinned {
		pinned = 1
	}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Note, error) {
		return t.tx.NoteInsert(ctx, dbsqlc.NoteInsertParams{
			ID: p.ID, Agent: p.Agent, Family: p.Family, ConversationID: uuidArg(p.ConversationID), Scope: string(p.Scope),
			Text: p.Text, Tags: string(tags), TagsText: strings.Join(p.Tags, " "), Pinned: pinned,
			WorkspaceID: uuidArg(p.WorkspaceID), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "creating a note of %s", p.Agent)
	}
	return noteOf(r)
}

func (q *queries) NoteGet(ctx context.Context, id uuid.UUID) (*store.Note, error) {
	r, err := q.read().NoteGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading note %s", id)
	}
	return noteOf(r)
}

// ftsMatch is an FTS5 query for any of the terms: each quoted, so nothing
// in them is read as FTS5 syntax.
func ftsMatch(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " OR ")
}

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (q *queries) NoteSearch(ctx context.Context, p *store.NoteSearchParams) ([]*store.Note, error) {
	r := p.Reader
	arg := dbsqlc.NoteSearchParams{
		Match: ftsMatch(p.Terms), WorkspaceID: uuidArg(r.WorkspaceID), Agent: r.Agent, Family: r.Family,
		ConversationID: uuid.NullUUID{UUID: r.ConversationID, Valid: true}, MaxRows: int64(p.Limit),
	}
	for _, s := range p.Scopes {
		arg.WithAgent |= flag(s == store.NoteScopeAgent)
		arg.WithFamily |= flag(s == store.NoteScopeFamily)
		arg.WithConversation |= flag(s == store.NoteScopeConversation)
	}
	rows, err := q.read().NoteSearch(ctx, arg)
	if err != nil {
		return nil, wrap(err, "searching the notes of %s", r.Agent)
	}
	notes := make([]dbsqlc.Note, len(rows))
	for i, row := range rows {
		notes[i] = row.Note
	}
	return notesOf(notes)
}

func (q *queries) NoteListPinned(ctx context.Context, p *store.NoteListPinnedParams) ([]*store.Note, error) {
	r := p.Reader
	rows, err := q.read().NoteListPinned(ctx, dbsqlc.NoteListPinnedParams{
		WorkspaceID: uuidArg(r.WorkspaceID), Agent: r.Agent, Family: r.Family,
		ConversationID: uuid.NullUUID{UUID: r.ConversationID, Valid: true}, MaxRows: int64(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing the pinned notes of %s", r.Agent)
	}
	return notesOf(rows)
}

func (q *queries) NoteList(ctx context.Context, p *store.NoteListParams) ([]*store.Note, error) {
	var conv *string
	if p.ConversationID != nil {
		s := p.ConversationID.String()
		conv = &s
	}
	rows, err := q.read().NoteList(ctx, dbsqlc.NoteListParams{
		Family: p.Family, Agent: p.Agent, ConversationID: textArg(conv), WithArchived: flag(p.WithArchived),
		AfterID: p.After, MaxRows: int64(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing notes")
	}
	return notesOf(rows)
}

func (q *queries) NoteTouch(ctx context.Context, p *store.NoteTouchParams) (int, error) {
	ids, err := json.Marshal(p.IDs)
	if err != nil {
		return 0, fmt.Errorf("encoding note ids: %w", err)
	}
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.NoteTouch(ctx, dbsqlc.NoteTouchParams{Uses: int64(p.Uses), Now: micros(p.Now), Ids: string(ids)})
	})
	if err != nil {
		return 0, wrap(err, "touching %d notes", len(p.IDs))
	}
	return int(n), nil
}

func (q *queries) NoteRescore(ctx context.Context, p *store.NoteRescoreParams) error {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.NoteRescore(ctx, dbsqlc.NoteRescoreParams{Relevance: p.Relevance, ID: p.ID})
	})
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return wrap(err, "rescoring note %s", p.ID)
	}
	return nil
}

func (q *queries) NoteArchive(ctx context.Context, p *store.NoteArchiveParams) (*store.Note, error) {
	var by uuid.UUID // uuid.Nil matches no note
	if p.SupersededBy != nil {
		by = *p.SupersededBy
	}
	rows, err := write(ctx, q, func(t *queries) ([]dbsqlc.Note, error) {
		return t.tx.NoteArchive(ctx, dbsqlc.NoteArchiveParams{ID: p.ID, Now: micros(p.Now), SupersededBy: by})
	})
	if err != nil {
		return nil, wrap(err, "archiving note %s", p.ID)
	}
	notes, err := notesOf(rows)
	if err != nil {
		return nil, err
	}
	return store.ArchivedNote(notes, p)
}

func (q *queries) SummarySearch(ctx context.Context, p *store.SummarySearchParams) ([]*store.SummaryHit, error) {
	terms, err := json.Marshal(p.Terms)
	if err != nil {
		return nil, fmt.Errorf("encoding search terms: %w", err)
	}
	rows, err := q.read().SummarySearch(ctx, dbsqlc.SummarySearchParams{
		Terms: string(terms), AgentID: uuid.NullUUID{UUID: p.AgentID, Valid: true}, ExcludeConversationID: p.Exclude,
		WorkspaceID: uuidArg(p.WorkspaceID), MaxRows: int64(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "searching the summaries of agent %s", p.AgentID)
	}
	out := make([]*store.SummaryHit, len(rows))
	for i, r := range rows {
		out[i] = &store.SummaryHit{EntryID: r.ID, ConversationID: r.ConversationID, Text: r.Text, CreatedAt: fromMicros(r.CreatedAt)}
	}
	return out, nil
}
