package slack

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// TestSlashCommands runs every /switchboard subcommand over HTTP (the
// signed form, answered in the response) and over Socket Mode (answered
// on the ack): ask reaches core as a message, remind/rules/grants reach the
// command handler with the typed text, agents lists, login and help answer.
func TestSlashCommands(t *testing.T) {
	for _, transport := range []string{"http", "socket"} {
		t.Run(transport, func(t *testing.T) {
			var mu sync.Mutex
			var commands []string
			env := newEnv(t, func(o *Options) {
				if transport == "socket" {
					o.AppToken = "xapp-test"
				}
				o.CommandFunc = func(_ context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					if !cmd.Private {
						t.Errorf("command %q was not marked private; a slash command's answer is ephemeral", cmd.Text)
					}
					commands = append(commands, cmd.Text)
					return "done: " + cmd.Text + " for " + in.UserID, nil
				}
				o.ListAgentsFunc = func(context.Context) ([]string, error) { return []string{"helper", "writer"}, nil }
			})
			run := func(text string) string {
				t.Helper()
				c := slacktest.Command{TeamID: "T0FAKE", ChannelID: "C1", UserID: "U7", UserName: "ana", Command: "/switchboard", Text: text,
					TriggerID: "trig-" + strings.ReplaceAll(text, " ", "_")}
				var reply struct {
					ResponseType string `json:"response_type"`
					Text         string `json:"text"`
				}
				if transport == "http" {
					code, body := env.postSigned(t, "/slack/commands", "application/x-www-form-urlencoded",
						[]byte(slacktest.SlashCommand(c).Encode()), env.clock.Now(), nil)
					if code != 200 || json.Unmarshal([]byte(body), &reply) != nil {
						t.Fatalf("/switchboard %s answered %d %q", text, code, body)
					}
				} else {
					id := env.srv.SendSlashCommand(slacktest.SlashCommandPayload(c))
					ack, err := env.srv.WaitAck(id, 10*time.Second)
					if err != nil || json.Unmarshal(ack, &reply) != nil {
						t.Fatalf("/switchboard %s ack %s: %v", text, ack, err)
					}
				}
				if reply.ResponseType != "ephemeral" {
					t.Errorf("/switchboard %s answered %+v, want an ephemeral reply", text, reply)
				}
				return reply.Text
			}
			cases := []struct{ text, want string }{
				{"help", "/switchboard ask"},
				{"login", "done: login for U7"},
				{"agents", "helper, writer"},
				{"remind in 2h -- call Ana", "done: remind in 2h -- call Ana for U7"},
				{"rules show", "done: rules show"},
				{"grants", "done: grants"},
				{"ask what is up?", "Asked"},
				{"frobnicate", "I don't know `frobnicate`"},
			}
			for _, c := range cases {
				if got := run(c.text); !strings.Contains(got, c.want) {
					t.Errorf("/switchboard %s answered %q, want it to say %q", c.text, got, c.want)
				}
			}
			in := env.core.waitInbound(t, 1)
			if len(in) != 1 || in[0].Text != "what is up?" || !in[0].Mentioned || in[0].Channel != "C1" || in[0].UserID != "U7" {
				t.Fatalf("submitted %+v, want the question addressed to the bot in C1", in)
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(commands, "|") != "login|remind in 2h -- call Ana|rules show|grants" {
				t.Fatalf("commands %q, want login, remind, rules and grants in order", commands)
			}
		})
	}
}
