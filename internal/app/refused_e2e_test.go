package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// A file Slack refuses for good (files.completeUploadExternal answers
// missing_scope, every time) does not hold up the conversation: the reply
// after it and the replies of the next three turns are posted, each once
// and whole, with one short notice in the file's place; the entry is
// recorded as undeliverable with the reason, so no instance tries it again.
func TestSlackRefusedFileDoesNotBlockLaterReplies(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		env := anthropicEnv(fake)
		env["SWITCHBOARD_PUBLIC_URL"] = "https://sb.example.com"
		e := startSlack(t, db(t), envOptions{env: env})
		e.slack.Fail("files.completeUploadExternal", slacktest.Fault{Error: "missing_scope", Needed: "files:write", Always: true})
		input, _ := json.Marshal(map[string]string{"kind": "code", "title": "main.go", "language": "go", "content": artifactSource})
		replies := []string{"Here is the program, as a file.", "Second answer.", "Third answer.", "Fourth answer."}
		fake.Push(
			modeltest.Reply{Text: "Writing it.", ToolCalls: []modeltest.ToolCall{{ID: "toolu_art", Name: "artifact_create", Input: string(input)}}},
			modeltest.Reply{Text: replies[0]},
			modeltest.Reply{Text: replies[1]},
			modeltest.Reply{Text: replies[2]},
			modeltest.Reply{Text: replies[3]},
		)
		const ch, root = "C0REFUSE", "1700009100.000001"
		e.mustPost(newEvent("EvRefuse0", mention(ch, root, "", alice, "write me a program")))
		e.waitReply(ch, replies[0])
		e.waitIdle()
		for i := 1; i < len(replies); i++ {
			ts := fmt.Sprintf("1700009100.%06d", 10+i)
			e.mustPost(newEvent(fmt.Sprintf("EvRefuse%d", i), mention(ch, ts, root, alice, fmt.Sprintf("and now %d", i))))
			e.waitReply(ch, replies[i])
			e.waitIdle()
		}

		msgs := e.botMessages(ch)
		var notices []string
		for _, m := range msgs {
			if m.Streaming {
				t.Errorf("message %s is still streaming: %q", m.TS, shown(m))
			}
			if s := shown(m); strings.Contains(s, "could not be posted") {
				notices = append(notices, s)
			}
			if strings.Contains(shown(m), "interrupted") {
				t.Errorf("message %s says the reply was interrupted: %q", m.TS, shown(m))
			}
		}
		for _, want := range append([]string{"Writing it."}, replies...) {
			n := 0
			for _, m := range msgs {
				if shown(m) == want {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%q shown %d times in %s, want once, whole; messages: %s", want, n, ch, describeMessages(msgs))
			}
		}
		if len(notices) != 1 || !strings.Contains(notices[0], "files:write") {
			t.Fatalf("notices %q, want one naming the missing files:write scope; messages: %s", notices, describeMessages(msgs))
		}
		for _, f := range e.slack.Files() {
			if f.Channel != "" {
				t.Errorf("file %s shared in %s although Slack refused it", f.Name, f.Channel)
			}
		}
		if n := len(e.slack.Calls("files.completeUploadExternal")); n != 1 {
			t.Errorf("files.completeUploadExternal called %d times, want once: a refusal is not retried", n)
		}

		// The refusal is recorded on the binding, with its reason.
		conv := e.conversation(ch, root)
		b, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, ch, root)})
		if err != nil {
			t.Fatal(err)
		}
		var refused int
		for _, en := range e.entries(conv.ID, store.EntryToolResult) {
			p, err := e.store.PostedGet(context.Background(), &store.PostedGetParams{BindingID: b.ID, EntryID: en.ID})
			if err != nil {
				continue
			}
			if p.Undeliverable != "" {
				refused++
				if p.Pending || !strings.Contains(p.Undeliverable, "files:write") {
					t.Errorf("posted record %+v, want the notice posted and the reason naming files:write", p)
				}
			}
		}
		if refused != 1 {
			t.Errorf("%d entries recorded as undeliverable, want the one file", refused)
		}
	})
}

// describeMessages lists messages for a failure.
func describeMessages(msgs []slacktest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n  ts %s streamed %v streaming %v: %q", m.TS, m.Streamed, m.Streaming, shown(m))
	}
	return b.String()
}

// A Slack turn that opens with a question (ask_user, no text before it)
// pauses cleanly: the thread shows the question and no "interrupted"
// notice, and no message is left streaming.
func TestSlackQuestionFirstTurnSaysNothingInterrupted(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake)})
		input, _ := json.Marshal(map[string]any{"question": "Which colour?", "choices": []string{"Red", "Blue"}})
		fake.Push(modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_ask", Name: "ask_user", Input: string(input)}}})
		const ch, root = "C0ASKFIRST", "1700009200.000001"
		e.mustPost(newEvent("EvAskFirst", mention(ch, root, "", alice, "pick a colour for me")))
		e.waitReply(ch, "Which colour?")
		e.waitIdle()
		msgs := e.botMessages(ch)
		for _, m := range msgs {
			if strings.Contains(shown(m), "interrupted") {
				t.Errorf("message %s says %q above the question; want no interruption notice on a turn that paused cleanly; messages: %s", m.TS, shown(m), describeMessages(msgs))
			}
			if m.Streaming {
				t.Errorf("message %s is still streaming; messages: %s", m.TS, describeMessages(msgs))
			}
		}
	})
}
