package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestStepQuestion(t *testing.T) {
	ev := &functionExecuted{Inputs: map[string]json.RawMessage{
		"agent": json.RawMessage(`" ada "`), "prompt": json.RawMessage(`"Summarise the form."`),
		"context": json.RawMessage(`"Budget: 12k\nOwner: Ana"`), "user_id": json.RawMessage(`"U0ALICE"`),
		"priority": json.RawMessage(`3`), "empty": json.RawMessage(`null`),
	}}
	agent, text, user := stepQuestion(ev)
	if agent != "ada" || user != "U0ALICE" {
		t.Fatalf("agent %q user %q; want ada and U0ALICE", agent, user)
	}
	for _, want := range []string{"Summarise the form.", "- context: Budget: 12k\n  Owner: Ana", "- priority: 3", "- user_id: <@U0ALICE>"} {
		if !strings.Contains(text, want) {
			t.Errorf("question %q lacks %q", text, want)
		}
	}
	if strings.Contains(text, "empty") || strings.Index(text, "- context") > strings.Index(text, "- priority") {
		t.Errorf("question %q: want null inputs left out and the inputs sorted by name", text)
	}
	if _, text, _ := stepQuestion(&functionExecuted{Inputs: map[string]json.RawMessage{"context": json.RawMessage(`"x"`)}}); text != "" {
		t.Errorf("a step without a prompt made the question %q; want none", text)
	}
}

func TestShortcutText(t *testing.T) {
	sc := shortcutContext{Channel: "C1", Thread: "1.0", Message: "2.0", Author: "U2", Text: "Is it &lt;done&gt;?", Asker: "U1"}
	thread := []slack.Message{
		{Msg: slack.Msg{Timestamp: "1.0", User: "U1", Text: "Plan: ship Friday."}},
		{Msg: slack.Msg{Timestamp: "2.0", User: "U2", Text: "Is it &lt;done&gt;?"}},
	}
	text := shortcutText(sc, thread)
	for _, want := range []string{"<@U1> asked you about a message", "They added no question", "<@U2>: Is it <done>?", "  <@U1>: Plan: ship Friday.", "→ <@U2>: Is it <done>?"} {
		if !strings.Contains(text, want) {
			t.Errorf("question %q lacks %q", text, want)
		}
	}
	sc.Question = "Who owns it?"
	if text := shortcutText(sc, nil); !strings.Contains(text, "Their question: Who owns it?") || strings.Contains(text, "thread it is in") {
		t.Errorf("question %q; want the person's question and no thread", text)
	}
}
