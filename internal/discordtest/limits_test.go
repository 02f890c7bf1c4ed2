package discordtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// errorAt walks Discord's nested "errors" object along path and returns
// the first error code there, or "".
func errorAt(body map[string]any, path ...string) string {
	cur, _ := body["errors"].(map[string]any)
	for _, k := range path {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return ""
		}
		cur = next
	}
	errs, _ := cur["_errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func TestEmbedAndV2Limits(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.AddChannel(discordgo.Channel{ID: "10", GuildID: DefaultGuildID})
	text := func(n int) map[string]any { return map[string]any{"type": 10, "content": strings.Repeat("a", n)} }
	container := func(children ...map[string]any) map[string]any {
		cs := make([]any, len(children))
		for i, c := range children {
			cs[i] = c
		}
		return map[string]any{"type": 17, "components": cs}
	}
	many := func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = text(1)
		}
		return out
	}
	field := func(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }
	fields := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = field("n", "v")
		}
		return out
	}
	const v2 = FlagComponentsV2
	tests := []struct {
		name string
		body map[string]any
		want int
		path []string // where the 50035 error must point
	}{
		{"embed title 256", map[string]any{"embeds": []any{map[string]any{"title": strings.Repeat("t", 256)}}}, 200, nil},
		{"embed title 257", map[string]any{"embeds": []any{map[string]any{"title": strings.Repeat("t", 257)}}}, 400, []string{"embeds", "0", "title"}},
		{"embed description 4097", map[string]any{"embeds": []any{map[string]any{"description": strings.Repeat("d", 4097)}}}, 400, []string{"embeds", "0", "description"}},
		{"25 fields", map[string]any{"embeds": []any{map[string]any{"fields": fields(25)}}}, 200, nil},
		{"26 fields", map[string]any{"embeds": []any{map[string]any{"fields": fields(26)}}}, 400, []string{"embeds", "0", "fields"}},
		{"field value 1025", map[string]any{"embeds": []any{map[string]any{"fields": []any{field("n", strings.Repeat("v", 1025))}}}}, 400, []string{"embeds", "0", "fields", "0", "value"}},
		{"field name 257", map[string]any{"embeds": []any{map[string]any{"fields": []any{field(strings.Repeat("n", 257), "v")}}}}, 400, []string{"embeds", "0", "fields", "0", "name"}},
		{"6001 in all", map[string]any{"embeds": []any{map[string]any{"description": strings.Repeat("d", 4000)}, map[string]any{"description": strings.Repeat("d", 2001)}}}, 400, []string{"embeds"}},
		{"v2 within limits", map[string]any{"flags": v2, "components": []any{container(many(39)...)}}, 200, nil},
		{"v2 41 components", map[string]any{"flags": v2, "components": []any{container(many(40)...)}}, 400, []string{"components"}},
		{"v2 4001 characters", map[string]any{"flags": v2, "components": []any{container(text(2000), text(2001))}}, 400, []string{"components"}},
		{"v2 with content", map[string]any{"flags": v2, "content": "hi", "components": []any{text(1)}}, 400, []string{"content"}},
		{"v2 with embeds", map[string]any{"flags": v2, "embeds": []any{map[string]any{"title": "t"}}, "components": []any{text(1)}}, 400, []string{"embeds"}},
		{"v2 components without the flag", map[string]any{"content": "x", "components": []any{container(text(1))}}, 400, []string{"components", "0", "type"}},
		{"section needs an accessory", map[string]any{"flags": v2, "components": []any{map[string]any{"type": 9, "components": []any{text(1)}}}}, 400, []string{"components", "0", "accessory"}},
	}
	for _, tc := range tests {
		code, body := do(t, s, "POST", "/channels/10/messages", tc.body)
		if code != tc.want {
			t.Errorf("%s: HTTP %d %v; want %d", tc.name, code, body, tc.want)
			continue
		}
		if tc.path != nil {
			if body["code"] != float64(50035) || body["message"] != "Invalid Form Body" || errorAt(body, tc.path...) == "" {
				t.Errorf("%s: body %v; want 50035 Invalid Form Body with an error at %v", tc.name, body, tc.path)
			}
		}
	}
}

func TestEditToComponentsV2(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.AddChannel(discordgo.Channel{ID: "10", GuildID: DefaultGuildID})
	_, sent := do(t, s, "POST", "/channels/10/messages", map[string]any{"content": "streaming…"})
	path := "/channels/10/messages/" + sent["id"].(string)
	card := []any{map[string]any{"type": 17, "components": []any{map[string]any{"type": 10, "content": "card"}}}}

	if code, body := do(t, s, "PATCH", path, map[string]any{"flags": FlagComponentsV2, "components": card}); code != http.StatusBadRequest || errorAt(body, "content") == "" {
		t.Fatalf("upgrading with the content left: HTTP %d %v; want 400 pointing at content", code, body)
	}
	if code, body := do(t, s, "PATCH", path, map[string]any{"flags": FlagComponentsV2, "content": nil, "embeds": []any{}, "components": card}); code != http.StatusOK {
		t.Fatalf("upgrading with content null: HTTP %d %v; want 200", code, body)
	}
	m := s.Message(sent["id"].(string))
	if !m.ComponentsV2() || m.Content != "" || len(m.TextDisplays()) != 1 {
		t.Fatalf("after the upgrade: %+v; want a V2 message with one text display and no content", m)
	}
	if code, body := do(t, s, "PATCH", path, map[string]any{"flags": 0, "content": "back"}); code != http.StatusBadRequest || errorAt(body, "flags") == "" {
		t.Errorf("removing the flag: HTTP %d %v; want 400 pointing at flags", code, body)
	}
	// An edit that leaves the flags out keeps them, and its components are
	// held to the V2 rules.
	if code, body := do(t, s, "PATCH", path, map[string]any{"components": card}); code != http.StatusOK {
		t.Errorf("editing a V2 message's components: HTTP %d %v; want 200", code, body)
	}
}

func TestWebhooks(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.AddChannel(discordgo.Channel{ID: "10", GuildID: DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	s.AddChannel(discordgo.Channel{ID: "11", GuildID: DefaultGuildID, ParentID: "10", Type: discordgo.ChannelTypeGuildPublicThread})
	s.AddChannel(discordgo.Channel{ID: "12", GuildID: DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	s.DenyWebhooks("12")

	if code, body := do(t, s, "POST", "/channels/12/webhooks", map[string]any{"name": "Switchboard"}); code != http.StatusForbidden || body["code"] != float64(50013) {
		t.Errorf("without Manage Webhooks: HTTP %d %v; want 403 50013", code, body)
	}
	if code, _ := do(t, s, "POST", "/channels/11/webhooks", map[string]any{"name": "Switchboard"}); code != http.StatusBadRequest {
		t.Errorf("a webhook on a thread: HTTP %d; want 400", code)
	}
	code, hook := do(t, s, "POST", "/channels/10/webhooks", map[string]any{"name": "Switchboard"})
	if code != http.StatusOK {
		t.Fatalf("creating: HTTP %d %v", code, hook)
	}
	base := "/webhooks/" + hook["id"].(string) + "/" + hook["token"].(string)
	code, msg := do(t, s, "POST", base+"?wait=true&thread_id=11", map[string]any{"content": "hello", "username": "Atlas", "avatar_url": "https://example.com/a.png"})
	if code != http.StatusOK {
		t.Fatalf("executing in the thread: HTTP %d %v", code, msg)
	}
	m := s.Message(msg["id"].(string))
	if m.ChannelID != "11" || m.Author.Username != "Atlas" || m.WebhookID != hook["id"] || m.AvatarURL != "https://example.com/a.png" {
		t.Errorf("webhook message = %+v; want it in thread 11 as Atlas with the avatar", m)
	}
	if code, _ := do(t, s, "PATCH", "/channels/11/messages/"+m.ID, map[string]any{"content": "x"}); code != http.StatusForbidden {
		t.Errorf("the bot editing the webhook's message: HTTP %d; want 403", code)
	}
	if code, _ := do(t, s, "PATCH", base+"/messages/"+m.ID, map[string]any{"content": "edited"}); code != http.StatusNotFound {
		t.Errorf("editing without thread_id: HTTP %d; want 404 (the message is in the thread)", code)
	}
	if code, body := do(t, s, "PATCH", base+"/messages/"+m.ID+"?thread_id=11", map[string]any{"content": "edited"}); code != http.StatusOK || s.Message(m.ID).Content != "edited" {
		t.Errorf("editing with thread_id: HTTP %d %v; want 200 and the new content", code, body)
	}
	if code, body := do(t, s, "POST", base+"?wait=true", map[string]any{"content": "x", "username": "Discord Bot"}); code != http.StatusBadRequest || errorAt(body, "username") == "" {
		t.Errorf("a username with discord in it: HTTP %d %v; want 400 at username", code, body)
	}
	if code, _ := do(t, s, "DELETE", base+"/messages/"+m.ID+"?thread_id=11", nil); code != http.StatusNoContent || s.Message(m.ID) != nil {
		t.Errorf("deleting: HTTP %d; want 204 and the message gone", code)
	}
}

func TestCommandInstallContexts(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	ok := []map[string]any{{"name": "ask", "description": "d", "integration_types": []int{0, 1}, "contexts": []int{0, 1, 2}}}
	if code, body := do(t, s, "PUT", "/applications/"+AppID+"/commands", ok); code != http.StatusOK {
		t.Fatalf("guild and user install: HTTP %d %v", code, body)
	}
	bad := []map[string]any{{"name": "ask", "description": "d", "contexts": []int{3}}}
	if code, _ := do(t, s, "PUT", "/applications/"+AppID+"/commands", bad); code != http.StatusBadRequest {
		t.Errorf("context 3: HTTP %d; want 400", code)
	}
}
