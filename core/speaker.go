package core

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// personAuthorPrefix is how the API records a person who posted with a
// personal token ("person:ID", web.Principal.Name).
const personAuthorPrefix = "person:"

// speaker is the person whose message the turn answers: the author of the
// last message from a person, found by their platform identity (or named
// by id when they posted through the API). nil when no known person spoke
// (a scheduled run, the operator, a stranger the store never kept). Tools
// act with the accounts of this person or of the conversation's workspace,
// never the agent's.
func (t *turn) speaker(ctx context.Context) *uuid.UUID {
	t.mu.Lock()
	entries := t.entries
	t.mu.Unlock()
	return t.s.speakerIn(ctx, entries)
}

// speakerIn is the person who wrote the last message from a person among
// entries (see turn.speaker); nil when none is known.
func (s *Service) speakerIn(ctx context.Context, entries []*store.Entry) *uuid.UUID {
	var last *UserContent
	for i := len(entries) - 1; i >= 0 && last == nil; i-- {
		if e := entries[i]; e.Kind == store.EntryUser {
			if c, err := Decode[UserContent](e); err == nil && c.UserID != "" {
				last = &c
			}
		}
	}
	if last == nil {
		return nil
	}
	if id, ok := strings.CutPrefix(last.UserID, personAuthorPrefix); ok {
		if pid, err := uuid.Parse(id); err == nil {
			return &pid
		}
		return nil
	}
	if last.Platform == "" {
		return nil
	}
	p, err := s.st.PersonFind(ctx, &store.PersonFindParams{Identity: IdentityOf(last.Platform, last.Workspace, last.UserID)})
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.WarnContext(ctx, "finding the person who spoke", "platform", last.Platform, "user_id", last.UserID, "error", err)
		}
		return nil
	}
	if p.MergedInto != nil {
		return p.MergedInto
	}
	return &p.ID
}
