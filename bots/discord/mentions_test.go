package discord

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/internal/discordtest"
)

// Model text may hold @everyone, @here, <@user> and <@&role>; no message the
// adapter sends or edits, by any route, may ping anyone. Every request that
// carries content must carry allowed_mentions with nothing allowed.
func TestNoMessagePingsAnyone(t *testing.T) {
	t.Parallel()
	a, fake, fc := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	ctx := context.Background()
	pings := "@everyone @here <@1000000000000000777> <@&1000000000000000888> "
	to := bots.Target{Channel: chanGeneral}

	refs, err := a.Post(ctx, to, &bots.Message{Text: pings + strings.Repeat("long ", 500), Buttons: []bots.Button{{ActionID: "sb-approval:1", Value: "ok", Label: "OK"}}})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	if err := a.Update(ctx, refs[0], &bots.Message{Text: pings + "updated"}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	// A card drawn in Components V2 carries the text in its components,
	// with no content: it too must allow no mentions, posted and edited
	// (an expired approval's prompt loses its buttons the same way).
	card, err := cards.Stamp(&cards.Result{Kind: cards.KindGeneric, Title: pings, Items: []cards.Item{{Title: pings, Sections: []cards.Section{{Text: pings}}}},
		Actions: []cards.Action{{ID: "pick", Label: "Pick", Kind: "signal"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cardRefs, err := a.Post(ctx, to, &bots.Message{Text: pings, Card: &bots.Card{EntryID: uuid.New(), Stamped: card}})
	if err != nil {
		t.Fatalf("Post card: %v", err)
	}
	if err := a.Update(ctx, cardRefs[0], &bots.Message{Text: pings, Card: &bots.Card{EntryID: uuid.New(), Stamped: card}}); err != nil {
		t.Fatalf("Update card: %v", err)
	}
	st, err := a.StartStream(ctx, to, nil)
	if err != nil {
		t.Fatalf("StartStream: %v", err)
	}
	if err := st.Append(ctx, pings); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if _, err := st.Finish(ctx, &bots.Message{Text: pings + "done"}); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	// An interaction's answer echoes text too: /ask quotes the prompt, a
	// click edits the question, a refused click answers privately.
	fake.SlashCommand(chanGeneral, "ask", map[string]string{"prompt": pings}, alice)
	fc.waitInbound(t, 1)
	last := refs[len(refs)-1]
	btn := fake.Message(last.ID).Buttons()[0]
	fake.ClickButton(last.ID, btn.CustomID, bob)
	fake.WaitCalls(t, "PATCH /webhooks/{app}/{token}/messages/{message}", 2)
	fc.mu.Lock()
	fc.actResult = core.ActionResult{Refused: true, Reason: pings}
	fc.mu.Unlock()
	fake.ClickButton(last.ID, btn.CustomID, bob)
	fake.WaitCalls(t, "POST /webhooks/{app}/{token}", 1)

	checked := map[string]int{}
	for _, c := range fake.Calls() {
		if len(c.Body) == 0 || (c.Method != "POST" && c.Method != "PATCH") {
			continue
		}
		var body struct {
			Content         *string         `json:"content"`
			AllowedMentions json.RawMessage `json:"allowed_mentions"`
			Data            *struct {
				Content         *string         `json:"content"`
				AllowedMentions json.RawMessage `json:"allowed_mentions"`
			} `json:"data"`
		}
		if err := c.Decode(&body); err != nil {
			continue // not a message body (e.g. the command list)
		}
		content, allowed := body.Content, body.AllowedMentions
		if body.Data != nil && body.Data.Content != nil {
			content, allowed = body.Data.Content, body.Data.AllowedMentions
		}
		if (content == nil || *content == "") && !strings.Contains(string(c.Body), "@everyone") {
			continue // no text of the model's in it
		}
		if content == nil {
			content = new(string)
		}
		var am struct {
			Parse []string `json:"parse"`
			Users []string `json:"users"`
			Roles []string `json:"roles"`
		}
		if len(allowed) == 0 || json.Unmarshal(allowed, &am) != nil || am.Parse == nil || len(am.Parse)+len(am.Users)+len(am.Roles) > 0 {
			t.Errorf("%s sends %.40q with allowed_mentions %s; want {\"parse\":[]}", c.Route, *content, allowed)
		}
		checked[c.Route]++
	}
	for _, route := range []string{
		"POST /channels/{channel}/messages",
		"PATCH /channels/{channel}/messages/{message}",
		"PATCH /webhooks/{app}/{token}/messages/{message}",
		"POST /webhooks/{app}/{token}",
	} {
		if checked[route] == 0 {
			t.Errorf("no %s with content was checked; the scenario should send one", route)
		}
	}
}
