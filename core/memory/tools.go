package memory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// The memory tools' names.
const (
	ToolRemember = "remember"
	ToolRecall   = "recall"
)

// RememberIn is remember's input.
type RememberIn struct {
	Text   string   `json:"text" jsonschema:"the note, one fact or preference in a sentence or two, written to make sense on its own later"`
	Scope  string   `json:"scope,omitempty" jsonschema:"who reads it: agent (you, in every conversation; the default), family (every agent of your owner) or conversation (only here)"`
	Tags   []string `json:"tags,omitempty" jsonschema:"short tags; a tag key:SUBJECT marks the subject, so a newer note with the same key replaces an older one"`
	Pinned bool     `json:"pinned,omitempty" jsonschema:"load it at the start of every turn (keep pinned notes few)"`
}

// RememberOut is what remember returns.
type RememberOut struct {
	ID    string `json:"id"`
	Scope string `json:"scope"`
}

// RecallIn is recall's input.
type RecallIn struct {
	Query string `json:"query" jsonschema:"words to look for in your notes, your family's and your other conversations' summaries"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many notes at most (default 5, at most 20)"`
}

// RecalledNote is a note recall found.
type RecalledNote struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Scope   string    `json:"scope"`
	Tags    []string  `json:"tags,omitempty"`
	Agent   string    `json:"agent"`
	Created time.Time `json:"created"`
}

// RecallOut is what recall returns.
type RecallOut struct {
	Notes     []RecalledNote `json:"notes"`
	Summaries []string       `json:"summaries,omitempty"`
}

// Remember writes a note for the calling agent in its conversation.
func (m *Memory) Remember(ctx context.Context, req *tool.Request, in RememberIn) (*store.Note, error) {
	scope := store.NoteScope(in.Scope)
	if scope == "" {
		scope = store.NoteScopeAgent
	}
	if !scope.Valid() {
		return nil, fmt.Errorf("scope %q is not agent, family or conversation", in.Scope)
	}
	ws, err := m.st.ConversationWorkspace(ctx, req.ConversationID)
	if err != nil {
		return nil, fmt.Errorf("finding the workspace of conversation %s: %w", req.ConversationID, err)
	}
	conv := req.ConversationID
	return m.st.NoteCreate(ctx, &store.NoteCreateParams{
		Agent: req.Agent, Family: m.Family(req.Agent), ConversationID: &conv, Scope: scope,
		Text: in.Text, Tags: in.Tags, Pinned: in.Pinned, WorkspaceID: ws, Now: m.now(),
	})
}

// Recall searches what the calling agent may read, and counts a use of
// every note it returns.
func (m *Memory) Recall(ctx context.Context, req *tool.Request, in RecallIn) (*RecallOut, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = 5
	}
	limit = min(limit, 20)
	ws, err := m.st.ConversationWorkspace(ctx, req.ConversationID)
	if err != nil {
		return nil, fmt.Errorf("finding the workspace of conversation %s: %w", req.ConversationID, err)
	}
	q := &Query{Family: m.Family(req.Agent)}
	q.Agent, q.AgentID, q.ConversationID, q.WorkspaceID = req.Agent, req.AgentID, req.ConversationID, ws
	notes, err := m.st.NoteSearch(ctx, &store.NoteSearchParams{Reader: q.Reader(), Query: in.Query, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &RecallOut{Notes: make([]RecalledNote, len(notes))}
	ids := make([]uuid.UUID, len(notes))
	for i, n := range notes {
		ids[i] = n.ID
		out.Notes[i] = RecalledNote{ID: n.ID.String(), Text: n.Text, Scope: string(n.Scope), Tags: n.Tags, Agent: n.Agent, Created: n.CreatedAt}
	}
	if _, err := m.st.NoteTouch(ctx, &store.NoteTouchParams{IDs: ids, Now: m.now()}); err != nil {
		return nil, fmt.Errorf("counting the use of recalled notes: %w", err)
	}
	if req.AgentID != nil {
		hits, err := m.st.SummarySearch(ctx, &store.SummarySearchParams{
			AgentID: *req.AgentID, Exclude: req.ConversationID, WorkspaceID: ws, Query: in.Query, Limit: maxSummaries,
		})
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			out.Summaries = append(out.Summaries, truncate(h.Text, maxSummaryChars))
		}
	}
	return out, nil
}

// RegisterTools registers remember and recall, which act for the calling
// agent in its conversation.
func RegisterTools(r *tool.Registry, m *Memory) error {
	err := errors.Join(
		tool.Register(r, tool.Def{
			Name: ToolRemember,
			Description: "Write down something worth knowing later: a fact, a preference, a decision. It is kept across " +
				"conversations and shown to you when it is relevant; search it with recall.",
			Risk: tool.RiskLow,
			SchemaFunc: func(s *jsonschema.Schema) error {
				if p := s.Properties["scope"]; p != nil {
					p.Enum = []any{string(store.NoteScopeAgent), string(store.NoteScopeFamily), string(store.NoteScopeConversation)}
				}
				return nil
			},
		}, func(ctx context.Context, req *tool.Request, in RememberIn) (RememberOut, error) {
			n, err := m.Remember(ctx, req, in)
			if err != nil {
				return RememberOut{}, err
			}
			return RememberOut{ID: n.ID.String(), Scope: string(n.Scope)}, nil
		}),
		tool.Register(r, tool.Def{
			Name:        ToolRecall,
			Description: "Search your notes, your family's and the summaries of your other conversations for words, best match first.",
			Risk:        tool.RiskLow,
		}, func(ctx context.Context, req *tool.Request, in RecallIn) (RecallOut, error) {
			out, err := m.Recall(ctx, req, in)
			if err != nil {
				return RecallOut{}, err
			}
			return *out, nil
		}),
	)
	if err != nil {
		return fmt.Errorf("registering memory tools: %w", err)
	}
	return nil
}
