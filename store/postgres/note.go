package postgres

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func noteOf(r *dbsqlc.Note) *store.Note {
	tags := r.Tags
	if tags == nil {
		tags = []string{}
	}
	return &store.Note{
		ID: r.ID, Agent: r.Agent, Family: r.Family, ConversationID: r.ConversationID, Scope: store.NoteScope(r.Scope),
		Text: r.Text, Tags: tags, Pinned: r.Pinned, Relevance: r.Relevance, Uses: int(r.Uses), LastUsedAt: r.LastUsedAt,
		CreatedAt: r.CreatedAt, ArchivedAt: r.ArchivedAt, Supersedes: r.Supersedes, WorkspaceID: r.WorkspaceID,
	}
}

func (q *queries) NoteCreate(ctx context.Context, p *store.NoteCreateParams) (*store.Note, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).NoteInsert, &dbsqlc.NoteInsertParams{
		ID: p.ID, Agent: p.Agent, Family: p.Family, ConversationID: p.ConversationID, Scope: string(p.Scope),
		Text: p.Text, Tags: p.Tags, TagsText: strings.Join(p.Tags, " "), Pinned: p.Pinned, WorkspaceID: p.WorkspaceID, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "creating a note of %s", p.Agent)
	}
	return noteOf(&row), nil
}

func (q *queries) NoteGet(ctx context.Context, id uuid.UUID) (*store.Note, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).NoteGet, id)
	if err != nil {
		return nil, wrap(err, "reading note %s", id)
	}
	return noteOf(&row), nil
}

func (q *queries) NoteSearch(ctx context.Context, p *store.NoteSearchParams) ([]*store.Note, error) {
	r := p.Reader
	arg := &dbsqlc.NoteSearchParams{
		// The terms are letters and digits only (store.SearchTerms), so
		// OR-ing them makes a valid tsquery.
		Match: strings.Join(p.Terms, " | "), WorkspaceID: r.WorkspaceID,
		Agent: r.Agent, Family: r.Family, ConversationID: &r.ConversationID, MaxRows: int32(p.Limit),
	}
	for _, s := range p.Scopes {
		switch s {
		case store.NoteScopeAgent:
			arg.WithAgent = true
		case store.NoteScopeFamily:
			arg.WithFamily = true
		case store.NoteScopeConversation:
			arg.WithConversation = true
		}
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).NoteSearch, arg)
	if err != nil {
		return nil, wrap(err, "searching the notes of %s", r.Agent)
	}
	out := make([]*store.Note, len(rows))
	for i := range rows {
		out[i] = noteOf(&rows[i].Note)
	}
	return out, nil
}

func (q *queries) NoteListPinned(ctx context.Context, p *store.NoteListPinnedParams) ([]*store.Note, error) {
	r := p.Reader
	rows, err := call(ctx, q, (*dbsqlc.Queries).NoteListPinned, &dbsqlc.NoteListPinnedParams{
		WorkspaceID: r.WorkspaceID, Agent: r.Agent, Family: r.Family, ConversationID: &r.ConversationID, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing the pinned notes of %s", r.Agent)
	}
	return each(rows, noteOf), nil
}

func (q *queries) NoteList(ctx context.Context, p *store.NoteListParams) ([]*store.Note, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).NoteList, &dbsqlc.NoteListParams{
		Family: p.Family, Agent: p.Agent, ConversationID: p.ConversationID, WithArchived: p.WithArchived,
		AfterID: p.After, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing notes")
	}
	return each(rows, noteOf), nil
}

func (q *queries) NoteTouch(ctx context.Context, p *store.NoteTouchParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).NoteTouch, &dbsqlc.NoteTouchParams{Uses: int32(p.Uses), Now: ts(p.Now), Ids: uuidStrings(p.IDs)})
	if err != nil {
		return 0, wrap(err, "touching %d notes", len(p.IDs))
	}
	return int(n), nil
}

func (q *queries) NoteRescore(ctx context.Context, p *store.NoteRescoreParams) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).NoteRescore, &dbsqlc.NoteRescoreParams{Relevance: p.Relevance, ID: p.ID})
	if err == nil && n == 0 {
		err = errNoRow
	}
	return wrap(err, "rescoring note %s", p.ID)
}

func (q *queries) NoteArchive(ctx context.Context, p *store.NoteArchiveParams) (*store.Note, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).NoteArchive, &dbsqlc.NoteArchiveParams{ID: p.ID, Now: ts(p.Now), SupersededBy: p.SupersededBy})
	if err != nil {
		return nil, wrap(err, "archiving note %s", p.ID)
	}
	return store.ArchivedNote(each(rows, noteOf), p)
}

func (q *queries) SummarySearch(ctx context.Context, p *store.SummarySearchParams) ([]*store.SummaryHit, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SummarySearch, &dbsqlc.SummarySearchParams{
		Terms: p.Terms, AgentID: &p.AgentID, ExcludeConversationID: p.Exclude, WorkspaceID: p.WorkspaceID, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "searching the summaries of agent %s", p.AgentID)
	}
	out := make([]*store.SummaryHit, len(rows))
	for i, r := range rows {
		out[i] = &store.SummaryHit{EntryID: r.ID, ConversationID: r.ConversationID, Text: r.Text, CreatedAt: r.CreatedAt}
	}
	return out, nil
}
