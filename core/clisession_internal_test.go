package core

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// TestBuildRequestResumesTheLastCLISession: the agent's latest reply that
// names a CLI session is where the next call resumes, and Seen counts the
// messages that session holds.
func TestBuildRequestResumesTheLastCLISession(t *testing.T) {
	t.Parallel()
	me := store.AgentAuthor("coder")
	entry := func(kind store.EntryKind, author store.Author, content any) *store.Entry {
		return &store.Entry{Kind: kind, Author: author, Content: mustJSON(content)}
	}
	totals := &model.Usage{InputTokens: 200, OutputTokens: 40}
	entries := []*store.Entry{
		entry(store.EntryUser, store.UserAuthor("U1"), UserContent{Text: "one"}),
		entry(store.EntryAssistant, me, AssistantContent{Text: "first", Session: &CLISession{Provider: "claude-code", ID: "s-old"}}),
		entry(store.EntryUser, store.UserAuthor("U1"), UserContent{Text: "two"}),
		entry(store.EntryAssistant, me, AssistantContent{Text: "second", Session: &CLISession{Provider: "claude-code", ID: "s-new", Totals: totals}}),
		entry(store.EntryUser, store.UserAuthor("U1"), UserContent{Text: "three"}),
	}
	a := &config.Agent{Name: "coder", Model: "claude-code:sonnet"}
	req, err := buildRequest(a, tool.ContextAPI, nil, nil, nil, entries, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := req.Session
	if s == nil || s.ID != "s-new" || s.Provider != "claude-code" || s.Seen != 4 || s.Totals == nil || *s.Totals != *totals {
		t.Fatalf("session = %+v, want s-new having seen 4 messages, with its totals", s)
	}
	if len(req.Messages) != 5 || req.Messages[s.Seen].Parts[0].Text != "three" {
		t.Errorf("messages after the session's = %+v, want the new message", req.Messages[s.Seen:])
	}

	// Another agent's session is not this agent's to resume.
	entries[3].Author = store.AgentAuthor("other")
	if req, err = buildRequest(a, tool.ContextAPI, nil, nil, nil, entries, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if req.Session == nil || req.Session.ID != "s-old" {
		t.Errorf("session = %+v, want this agent's own s-old", req.Session)
	}
}
