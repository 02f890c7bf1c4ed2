package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`
agents: []
slack:
  ack: inline
  allow_bots: true
  agent_view: false
  task_updates: false
  feedback_buttons: false
  home_tab: false
  ack_reaction: ":eyes:"
  done_reaction: ""
  files:
    max_bytes: 1048576
    max_count: 0
  streaming:
    update_interval: 2s
    max_age: 3m
`))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		DoneReaction: "white_check_mark",
		TaskUpdates:  true, AgentSessions: true,
		FeedbackFunc: func(context.Context, *core.Feedback) error { return nil },
		HomeFunc:     func(context.Context, string, string, string) (*Home, error) { return &Home{}, nil },
	}
	c.Apply(&o)
	if !o.AllowBots || !o.InlineAck || o.AgentSessions || o.TaskUpdates || o.FeedbackFunc != nil || o.HomeFunc != nil ||
		o.AckReaction != "eyes" || o.DoneReaction != "" || o.FileMaxBytes != 1<<20 || o.FileMaxCount != -1 || o.StreamUpdateInterval != 2*time.Second || o.StreamMaxAge != 3*time.Minute {
		t.Fatalf("options after the block: %+v", o)
	}
	empty, err := ParseConfig([]byte("agents: []\n"))
	if err != nil || empty.AckReaction != nil || empty.FileMaxBytes != nil || empty.FileMaxCount != nil || empty.AllowBots != nil {
		t.Fatalf("no slack block: %+v, %v; want an empty config", empty, err)
	}

	for _, bad := range []struct{ yaml, want string }{
		{"slack:\n  persnoa: 1\n", "slack.persnoa: unknown field (known: ack, allow_bots"},
		{"slack:\n  ack: later\n", `slack.ack: "later" must be deferred or inline`},
		{"slack:\n  allow_bots: yes please\n", "slack.allow_bots: must be true or false"},
		{"slack:\n  streaming:\n    max_age: 10m\n", "slack.streaming.max_age: \"10m\" must be a duration from 30s to 4m50s"},
		{"slack:\n  streaming:\n    edit_interval: 1s\n", "slack.streaming.edit_interval: unknown field"},
		{"slack:\n  ack_reaction: two words\n", "slack.ack_reaction"},
		{"slack: [1]\n", "slack: must be a mapping"},
		{"slack:\n  files:\n    max_bytes: 5MB\n", "slack.files.max_bytes: \"5MB\" must be a whole number"},
		{"slack:\n  files:\n    types: [pdf]\n", "slack.files.types: unknown field"},
		{"slack:\n  home_tab: true\n  home_tab: false\n", "slack.home_tab: given twice"},
	} {
		_, err := ParseConfig([]byte(bad.yaml))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one saying %q", bad.yaml, err, bad.want)
		}
		if err != nil && strings.Contains(err.Error(), "slack.Config") {
			t.Errorf("%q: error %v names a Go type", bad.yaml, err)
		}
	}
}
