package core

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// TestPageContextInTurnBlock: what the person looks at in the web console
// reaches the per-turn block of the turn that answers their latest
// message, never the history or the stable block; a later message
// without it clears it.
func TestPageContextInTurnBlock(t *testing.T) {
	t.Parallel()
	a := &config.Agent{Name: "atlas", Persona: "You help.", Model: "scripted:x"}
	user := func(seq int64, text, page string) *store.Entry {
		return &store.Entry{Seq: &seq, Kind: store.EntryUser, Author: store.UserAuthor("person:1"), Content: mustJSON(UserContent{Text: text, PageContext: page})}
	}
	reply := func(seq int64) *store.Entry {
		return &store.Entry{Seq: &seq, Kind: store.EntryAssistant, Author: store.AgentAuthor("atlas"), Content: mustJSON(AssistantContent{Text: "ok"})}
	}
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	page := "The log view, conversation 42, as of seq 7"
	req, err := buildRequest(a, tool.ContextAPI, nil, nil, nil, []*store.Entry{user(1, "what is this?", page)}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.Turn, page) {
		t.Errorf("turn block %q; want the page context %q", req.Turn, page)
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if strings.Contains(p.Text, page) {
				t.Errorf("the page context is in the history: %q", p.Text)
			}
		}
	}
	if strings.Contains(req.System[0].Text, page) {
		t.Error("the page context is in the stable block")
	}
	req, err = buildRequest(a, tool.ContextAPI, nil, nil, nil, []*store.Entry{user(1, "what is this?", page), reply(2), user(3, "thanks", "")}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(req.Turn, page) {
		t.Errorf("turn block %q still carries the context of an earlier message", req.Turn)
	}
}
