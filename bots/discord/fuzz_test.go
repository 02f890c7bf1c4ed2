package discord

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/internal/discordtest"
)

// Whatever Discord (or someone posing as it) sends, the adapter does not
// panic: a gateway message or interaction of any shape, and any signed body
// at the HTTP interactions endpoint, which never answers with a server
// error.
func FuzzInbound(f *testing.F) {
	f.Add(discordtest.PingPayload())
	f.Add([]byte(`{"id":"1","type":2,"token":"t","channel_id":"2","data":{"name":"ask","options":[{"name":"prompt","type":3,"value":"@everyone hi"}]},"member":{"user":{"id":"3","username":"u"}}}`))
	f.Add([]byte(`{"id":"1","type":3,"token":"t","channel_id":"2","data":{"custom_id":"sb:x\u0000y","component_type":2},"user":{"id":"3"}}`))
	f.Add([]byte(`{"id":"1","type":2,"data":{"name":"remind","options":[{"name":"when","type":4,"value":7}]}}`))
	f.Add([]byte(`{"id":"5","channel_id":"2","guild_id":"9","content":"<@1000000000000000900> hi <@&1>","author":{"id":"3","username":"u"},"mentions":[{"id":"1000000000000000900"}]}`))
	f.Add([]byte(`{"type":3,"data":null,"message":{"components":[{"type":1,"components":[{"type":2}]}]}}`))
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		f.Fatal(err)
	}
	a, fake, _ := start(f, func(o *Options) {
		o.PublicKey = hex.EncodeToString(pub)
		o.Logger = slog.New(slog.DiscardHandler)
	})
	mux := http.NewServeMux()
	a.Routes(mux)
	srv := httptest.NewServer(mux)
	f.Cleanup(srv.Close)
	endpoint := srv.URL + "/discord/interactions"
	f.Fuzz(func(t *testing.T, body []byte) {
		var i discordgo.Interaction
		if json.Unmarshal(body, &i) == nil {
			a.onInteractionCreate(nil, &discordgo.InteractionCreate{Interaction: &i})
		}
		var m discordgo.Message
		if json.Unmarshal(body, &m) == nil && m.Author != nil {
			a.onMessageCreate(nil, &discordgo.MessageCreate{Message: &m})
		}
		status, _, err := fake.PostInteraction(endpoint, priv, body)
		if err != nil {
			t.Fatalf("posting interaction: %v", err)
		}
		if status >= 500 {
			t.Fatalf("interactions endpoint answered %d for %q", status, body)
		}
	})
}
