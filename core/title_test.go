package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func TestConversationTitle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"  plan   the\nlaunch ", "plan the launch"},
		{strings.Repeat("a", 60), strings.Repeat("a", 60)},
		{"Could you draft the release notes for version two, with the migration steps and the known issues", "Could you draft the release notes for version two, with the…"},
		{strings.Repeat("x", 100), strings.Repeat("x", 59) + "…"},
	} {
		got := core.ConversationTitle(c.in)
		if got != c.want {
			t.Errorf("ConversationTitle(%q) = %q, want %q", c.in, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > core.TitleRunes {
			t.Errorf("ConversationTitle(%q) has %d characters, more than %d", c.in, n, core.TitleRunes)
		}
	}
}

// TestConversationTitledByFirstMessage: a conversation made over the API
// or on a platform is named by the first message a person writes in it;
// later messages, a rename before it and a command do not name it.
func TestConversationTitledByFirstMessage(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, configure: func(o *core.Options) {
			o.CommandFunc = func(context.Context, *core.Inbound, *core.Command) (string, error) { return "ok", nil }
		}}
		in := s.start(t, "turns:\n  - text: Noted.\n  - text: Noted again.\n  - text: Hello.\n  - text: Found it.\n")
		titleOf := func(id uuid.UUID) string {
			t.Helper()
			c, err := s.st.ConversationGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return c.Title
		}
		first := "Could you draft the release notes for version two, with the migration steps and the known issues"
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if got := titleOf(conv.ID); got != "" {
			t.Fatalf("a new API conversation is titled %q; want none yet", got)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", first); err != nil {
			t.Fatal(err)
		}
		want := core.ConversationTitle(first)
		if got := titleOf(conv.ID); got != want {
			t.Fatalf("title after the first message = %q, want %q", got, want)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "and a second thing"); err != nil {
			t.Fatal(err)
		}
		if got := titleOf(conv.ID); got != want {
			t.Errorf("title after a second message = %q, want %q kept", got, want)
		}

		renamed, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		name := "Chosen by hand"
		if _, err := s.st.ConversationFile(ctx, &store.ConversationFileParams{ID: renamed.ID, Title: &name}); err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, renamed.ID, "alice", "hello"); err != nil {
			t.Fatal(err)
		}
		if got := titleOf(renamed.ID); got != name {
			t.Errorf("a renamed conversation's title after its first message = %q, want %q", got, name)
		}

		// On a platform: a command first names nothing; the first message
		// does.
		cmd := slackMessage("Ev1", "U1", "!help")
		res, err := in.svc.Submit(ctx, cmd)
		if err != nil {
			t.Fatal(err)
		}
		if got := titleOf(res.ConversationID); got != "" {
			t.Errorf("a Slack conversation opened by a command is titled %q; want none", got)
		}
		if _, err := in.svc.Submit(ctx, slackMessage("Ev2", "U1", "Where is the  budget sheet?")); err != nil {
			t.Fatal(err)
		}
		if got := titleOf(res.ConversationID); got != "Where is the budget sheet?" {
			t.Errorf("a Slack conversation's title after its first message = %q", got)
		}
	})
}

// TestForkTitledByEditedFirstMessage: Fork titles its fork by the edited
// text when no person's message comes before the edited seq (the agent's
// own messages do not count, however many), and keeps the parent's title
// for an edit of a later message; the parent keeps its own.
func TestForkTitledByEditedFirstMessage(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, "turns:\n  - text: One.\n  - text: Two.\n  - text: Three.\n")
		conv, err := s.st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: s.clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		add := func(author store.Author, content any, title string) {
			t.Helper()
			raw, err := json.Marshal(content)
			if err != nil {
				t.Fatal(err)
			}
			kind := store.EntryUser
			if _, agent := author.Agent(); agent {
				kind = store.EntryAssistant
			}
			if _, err := s.st.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: conv.ID, Kind: kind, Author: author, Content: raw, Title: title, Now: s.clock.Now(),
			}); err != nil {
				t.Fatal(err)
			}
		}
		// More of the agent's messages than one page of firstMessageEdit's
		// read, then alice's first and second messages at 71 and 72.
		for range 70 {
			add(store.AgentAuthor("switchboard"), core.AssistantContent{Text: "news"}, "")
		}
		add(store.UserAuthor("alice"), core.UserContent{Text: "first question", UserID: "alice"}, "first question")
		add(store.UserAuthor("alice"), core.UserContent{Text: "second question", UserID: "alice"}, "second question")

		forkTitle := func(seq int64, text string) string {
			t.Helper()
			res, err := in.svc.Fork(ctx, conv.ID, seq, "alice", text)
			if err != nil {
				t.Fatal(err)
			}
			waitStatus(t, s.st, res.ConversationID, store.ConversationIdle)
			c, err := s.st.ConversationGet(ctx, res.ConversationID)
			if err != nil {
				t.Fatal(err)
			}
			return c.Title
		}
		if got := forkTitle(71, "first question, edited"); got != "first question, edited" {
			t.Errorf("the fork of alice's edited first message is titled %q", got)
		}
		if got := forkTitle(72, "second question, edited"); got != "first question" {
			t.Errorf("the fork of alice's edited second message is titled %q, want the parent's", got)
		}
		if got := forkTitle(5, "an early word"); got != "an early word" {
			t.Errorf("the fork at seq 5, before any message of a person, is titled %q", got)
		}
		if c, err := s.st.ConversationGet(ctx, conv.ID); err != nil || c.Title != "first question" {
			t.Errorf("the parent after its forks: %+v, %v; want its own title", c, err)
		}
	})
}
