// Package transcript exports a conversation's log as a document and
// imports one back as a new conversation: JSON, which round-trips
// losslessly, and Markdown, for people to read (and, best effort, to bring
// back the text).
//
// What a JSON round trip keeps: the title, the agent (by name), provider,
// model, thinking, metadata, the creation time, whether it was archived,
// and every entry in the log (error entries too) with its seq, after_seq,
// kind, author, content, turn id and time. What changes: the ids (the
// conversation's and each entry's are new), and a fork comes back as a root
// (its parent and fork seq are another conversation's and are not
// imported, so the export of the import has no "forked_from").
package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Format names the JSON document this package writes and reads.
const Format = "switchboard.conversation/v1"

// Doc is a conversation as exported.
type Doc struct {
	Format       string       `json:"format"`
	Conversation Conversation `json:"conversation"`
	Entries      []Entry      `json:"entries"`
}

// Conversation is the conversation's part of a Doc.
type Conversation struct {
	ID         uuid.UUID       `json:"id"`
	Title      string          `json:"title"`
	Agent      string          `json:"agent,omitempty"`
	Provider   string          `json:"provider,omitempty"`
	Model      string          `json:"model,omitempty"`
	Thinking   string          `json:"thinking,omitempty"`
	Metadata   json.RawMessage `json:"metadata"`
	Archived   bool            `json:"archived"`
	CreatedAt  time.Time       `json:"created_at"`
	ForkedFrom *ForkedFrom     `json:"forked_from,omitempty"`
}

// ForkedFrom names where a fork diverged; informational, never imported.
type ForkedFrom struct {
	ConversationID uuid.UUID `json:"conversation_id"`
	Seq            int64     `json:"seq"`
}

// Entry is one entry of the log.
type Entry struct {
	ID        uuid.UUID       `json:"id"`
	Seq       *int64          `json:"seq"` // null for an error entry
	AfterSeq  int64           `json:"after_seq"`
	Kind      store.EntryKind `json:"kind"`
	Author    store.Author    `json:"author"`
	Content   json.RawMessage `json:"content"`
	TurnID    *uuid.UUID      `json:"turn_id,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// ErrInvalid is what a malformed document wraps.
var ErrInvalid = errors.New("invalid transcript")

// Export reads a conversation and its whole log, error entries included.
func Export(ctx context.Context, q store.Queries, id uuid.UUID) (*Doc, error) {
	c, err := q.ConversationGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("exporting conversation %s: %w", id, err)
	}
	f, err := q.ConversationFilingGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("exporting conversation %s: %w", id, err)
	}
	es, err := q.EntryList(ctx, &store.EntryListParams{ConversationID: id, WithErrors: true})
	if err != nil {
		return nil, fmt.Errorf("exporting the log of %s: %w", id, err)
	}
	d := &Doc{Format: Format, Conversation: Conversation{
		ID: c.ID, Title: c.Title, Provider: c.Provider, Model: c.Model, Thinking: c.Thinking,
		Metadata: c.Metadata, Archived: f.ArchivedAt != nil, CreatedAt: c.CreatedAt,
	}, Entries: make([]Entry, 0, len(es))}
	if c.ParentID != nil && c.ForkSeq != nil {
		d.Conversation.ForkedFrom = &ForkedFrom{ConversationID: *c.ParentID, Seq: *c.ForkSeq}
	}
	if c.AgentID != nil {
		name, err := agentName(ctx, q, *c.AgentID)
		if err != nil {
			return nil, fmt.Errorf("exporting conversation %s: %w", id, err)
		}
		d.Conversation.Agent = name
	}
	for _, e := range es {
		d.Entries = append(d.Entries, Entry{
			ID: e.ID, Seq: e.Seq, AfterSeq: e.AfterSeq, Kind: e.Kind, Author: e.Author,
			Content: e.Content, TurnID: e.TurnID, CreatedAt: e.CreatedAt,
		})
	}
	return d, nil
}

// agentName finds an agent's name by id: the store looks agents up by name,
// so the name is read from the agents listed in the config table.
func agentName(ctx context.Context, q store.Queries, id uuid.UUID) (string, error) {
	name, err := q.AgentNameGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil // an agent no longer configured: exported without one
	}
	return name, err
}

// ImportParams imports a document as a new conversation.
type ImportParams struct {
	Doc *Doc
	// WorkspaceID is where the new conversation goes (nil: none).
	WorkspaceID *uuid.UUID
	Now         time.Time
}

// Import writes the document as a new conversation in one transaction and
// returns its id. The seqs of the document must run 1, 2, 3... (error
// entries between them), as every export's do; an agent the document names
// must be configured here.
func Import(ctx context.Context, st store.Store, p *ImportParams) (uuid.UUID, error) {
	d := p.Doc
	if err := check(d); err != nil {
		return uuid.Nil, err
	}
	var agentID *uuid.UUID
	if d.Conversation.Agent != "" {
		ag, err := st.AgentGetByName(ctx, d.Conversation.Agent)
		if errors.Is(err, store.ErrNotFound) {
			return uuid.Nil, fmt.Errorf("%w: agent %q is not configured here", ErrInvalid, d.Conversation.Agent)
		} else if err != nil {
			return uuid.Nil, fmt.Errorf("importing a conversation: %w", err)
		}
		agentID = &ag.ID
	}
	created := d.Conversation.CreatedAt
	if created.IsZero() {
		created = p.Now
	}
	id := uuid.Must(uuid.NewV7())
	err := st.InTx(ctx, func(q store.Queries) error {
		if _, err := q.ConversationCreate(ctx, &store.ConversationCreateParams{
			ID: id, AgentID: agentID, Title: d.Conversation.Title, Provider: d.Conversation.Provider,
			Model: d.Conversation.Model, Thinking: d.Conversation.Thinking, Metadata: d.Conversation.Metadata, Now: created,
		}); err != nil {
			return err
		}
		for i, e := range d.Entries {
			at := e.CreatedAt
			if at.IsZero() {
				at = created
			}
			res, err := q.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: id, Kind: e.Kind, Author: e.Author, Content: e.Content, TurnID: e.TurnID, Now: at,
			})
			if err != nil {
				return fmt.Errorf("entry %d: %w", i+1, err)
			}
			if res.Entry.SeqValue() != seqOf(e) || res.Entry.AfterSeq != e.AfterSeq && e.Seq == nil {
				return fmt.Errorf("%w: entry %d has seq %v after %d, but the log would put it at %d after %d",
					ErrInvalid, i+1, e.Seq, e.AfterSeq, res.Entry.SeqValue(), res.Entry.AfterSeq)
			}
		}
		if p.WorkspaceID != nil {
			if err := q.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: id, WorkspaceID: *p.WorkspaceID}); err != nil {
				return err
			}
		}
		if d.Conversation.Archived {
			archived := true
			if _, err := q.ConversationFile(ctx, &store.ConversationFileParams{ID: id, Archived: &archived, Now: p.Now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("importing conversation %q: %w", d.Conversation.Title, err)
	}
	return id, nil
}

func seqOf(e Entry) int64 {
	if e.Seq == nil {
		return 0
	}
	return *e.Seq
}

// check refuses a document that is not one this package wrote.
func check(d *Doc) error {
	switch {
	case d == nil:
		return fmt.Errorf("%w: no document", ErrInvalid)
	case d.Format != Format:
		return fmt.Errorf("%w: format %q is not %q", ErrInvalid, d.Format, Format)
	}
	next := int64(1)
	for i, e := range d.Entries {
		if !e.Kind.Valid() {
			return fmt.Errorf("%w: entry %d: kind %q is unknown", ErrInvalid, i+1, e.Kind)
		}
		if (e.Kind == store.EntryError) != (e.Seq == nil) {
			return fmt.Errorf("%w: entry %d: an error entry and only an error entry has no seq", ErrInvalid, i+1)
		}
		if e.Seq != nil {
			if *e.Seq != next {
				return fmt.Errorf("%w: entry %d has seq %d; want %d (seqs run 1, 2, 3...)", ErrInvalid, i+1, *e.Seq, next)
			}
			next++
		} else if e.AfterSeq != next-1 {
			return fmt.Errorf("%w: error entry %d follows seq %d, not %d", ErrInvalid, i+1, next-1, e.AfterSeq)
		}
		if !json.Valid(e.Content) {
			return fmt.Errorf("%w: entry %d: content is not JSON", ErrInvalid, i+1)
		}
	}
	return nil
}
