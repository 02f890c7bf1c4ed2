package discord

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

func formOf(t *testing.T) (*cards.Action, string) {
	t.Helper()
	r := cardstest.FormResult()
	s, err := cards.Stamp(&r, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &s.Actions[0], cards.ButtonID(uuid.MustParse("0190c0de-7a11-7c4d-9e3f-00000000c0de"), &s.Actions[0])
}

// TestFormModalWire: the modal is what Discord documents: Labels around
// text inputs and string selects, no deprecated label on a text input, no
// "disabled" on a select, the initial answers filled in.
func TestFormModalWire(t *testing.T) {
	act, id := formOf(t)
	resp := FormModal(id, act.FormTitle(), act.Form, nil)
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Type int `json:"type"`
		Data struct {
			CustomID   string           `json:"custom_id"`
			Title      string           `json:"title"`
			Components []map[string]any `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != 9 || got.Data.CustomID != id || got.Data.Title != "Book a table" || len(got.Data.Components) != 5 {
		t.Fatalf("modal = %s; want type 9 with the form's id, title and five Labels", b)
	}
	types := []string{}
	for _, c := range got.Data.Components {
		child := c["component"].(map[string]any)
		if c["type"].(float64) != 18 {
			t.Fatalf("component %v is not a Label", c)
		}
		if _, has := child["label"]; has {
			t.Errorf("input %v carries the deprecated label", child)
		}
		if _, has := child["disabled"]; has {
			t.Errorf("input %v carries disabled, which a modal refuses", child)
		}
		types = append(types, child["custom_id"].(string)+":"+string(rune('0'+int(child["type"].(float64)))))
	}
	if strings.Join(types, ",") != "day:4,seating:3,guests:4,diet:3,notes:4" {
		t.Errorf("inputs = %v", types)
	}
	day := got.Data.Components[0]["component"].(map[string]any)
	if day["value"] != "2026-12-24" || got.Data.Components[0]["description"] != "A date as YYYY-MM-DD, on or after 2026-12-01" {
		t.Errorf("the day = %v (%v); want its initial date and the format to type", day, got.Data.Components[0]["description"])
	}
	diet := got.Data.Components[3]["component"].(map[string]any)
	if diet["min_values"].(float64) != 0 || diet["max_values"].(float64) != 2 || diet["required"] != false {
		t.Errorf("the multi-select = %v; want 0 to 2 choices, optional", diet)
	}
}

// TestModalSubmitRoundTrip: wrong answers come back in a private message
// whose answers embed fills the modal in again as they were typed.
func TestModalSubmitRoundTrip(t *testing.T) {
	act, id := formOf(t)
	raw := `{"type":5,"id":"1","token":"t","data":{"custom_id":"` + id + `","components":[
	  {"type":18,"id":1,"component":{"type":4,"id":2,"custom_id":"day","value":"2026-13-01"}},
	  {"type":18,"id":3,"component":{"type":3,"id":4,"custom_id":"seating","values":["terrace"]}},
	  {"type":18,"id":5,"component":{"type":4,"id":6,"custom_id":"guests","value":"3"}},
	  {"type":18,"id":7,"component":{"type":3,"id":8,"custom_id":"diet","values":["vegan","gluten_free"]}},
	  {"type":1,"components":[{"type":4,"custom_id":"notes","value":"window\nseat"}]}]}}`
	if !isModalSubmit([]byte(raw)) {
		t.Fatal("a type 5 interaction is a modal submission")
	}
	sub, err := readModalSubmit([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if sub.CustomID != id || sub.Values["day"][0] != "2026-13-01" || strings.Join(sub.Values["diet"], ",") != "vegan,gluten_free" || sub.Values["notes"][0] != "window\nseat" {
		t.Fatalf("read %+v", sub)
	}
	_, problems := act.Form.Parse(sub.Values)
	resp := fixMessage(id, act.Form, &core.ActionResult{Invalid: problems}, sub.Values, "")
	if resp.Type != discordgo.InteractionResponseChannelMessageWithSource || resp.Data.Flags != discordgo.MessageFlagsEphemeral ||
		!strings.Contains(resp.Data.Content, "**Day**: Enter a date as YYYY-MM-DD") {
		t.Fatalf("fix message = %+v", resp.Data)
	}
	msg := &discordgo.Message{Content: resp.Data.Content, Embeds: resp.Data.Embeds, Components: resp.Data.Components}
	back := answersOf(msg, act.Form)
	for k, v := range sub.Values {
		if strings.Join(back[k], "|") != strings.Join(v, "|") {
			t.Errorf("answer %s read back as %q, want %q", k, back[k], v)
		}
	}
	if answersOf(&discordgo.Message{Content: "a card"}, act.Form) != nil {
		t.Error("a message without the answers embed fills nothing in")
	}
}
