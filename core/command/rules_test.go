package command

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// TestRules: !rules sets the rulebook of the conversation it is typed in
// (line breaks and " -- " kept), shows it, clears it, and refuses what
// cannot be a rulebook; another conversation is untouched.
func TestRules(t *testing.T) {
	h, _ := newHandler(t)
	svc := h.opts.Rulebooks.(*core.Service)
	ctx := context.Background()
	conv, err := svc.CreateConversation(ctx, "", "slack", "U1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.CreateConversation(ctx, "", "slack", "U1")
	if err != nil {
		t.Fatal(err)
	}
	run := func(c uuid.UUID, text string) (string, error) {
		return h.run(ctx, request{Platform: "slack", Workspace: "T1", Channel: "C1", UserID: "U1", Text: text, ConversationID: c})
	}
	steps := []struct {
		conv    uuid.UUID
		text    string
		want    string // a part of the reply
		wantErr string // a part of the refusal
	}{
		{conv: conv.ID, text: "rules", want: "This conversation has no rulebook."},
		{conv: conv.ID, text: "rules Two sentences at most -- no emojis.\nNever answer Bob's jokes.", want: "Rulebook set."},
		{conv: conv.ID, text: "RULES", want: "set by U1 on 2026-03-02 12:00 UTC; `!rules clear` removes it):\nTwo sentences at most -- no emojis.\nNever answer Bob's jokes."},
		{conv: other.ID, text: "rules", want: "This conversation has no rulebook."},
		{conv: conv.ID, text: "rules " + strings.Repeat("x", 4001), wantErr: "the rulebook has 4001 characters; keep it to 4000"},
		{conv: conv.ID, text: "rules clear", want: "Rulebook cleared"},
		{conv: conv.ID, text: "rules clear", want: "This conversation had no rulebook."},
		{conv: uuid.Nil, text: "rules Be brief.", wantErr: "type `!rules` in the conversation it is for"},
	}
	for _, st := range steps {
		reply, err := run(st.conv, st.text)
		if st.wantErr != "" {
			if !refused(err) || !strings.Contains(err.Error(), st.wantErr) {
				t.Fatalf("%q: error %v, reply %q; want a refusal saying %q", st.text, err, reply, st.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(reply, st.want) {
			t.Fatalf("%q: reply %q, error %v; want it to contain %q", st.text, reply, err, st.want)
		}
	}
}
