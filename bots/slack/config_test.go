package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
)

// slackConfig reads the slack: section of a whole switchboard.yaml as the
// app does: config.Parse decodes the file, ConfigFrom checks the section.
func slackConfig(raw string) (*Config, error) {
	file, err := config.Parse("switchboard.yaml", []byte(raw), nil)
	if err != nil {
		return nil, err
	}
	return ConfigFrom(&file.Slack)
}

func TestConfigFrom(t *testing.T) {
	c, err := slackConfig(`
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
`)
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
	empty, err := slackConfig("agents: []\n")
	if err != nil || empty.AckReaction != nil || empty.FileMaxBytes != nil || empty.FileMaxCount != nil || empty.AllowBots != nil {
		t.Fatalf("no slack block: %+v, %v; want an empty config", empty, err)
	}

	for _, bad := range []struct{ yaml, want string }{
		{"slack:\n  persnoa: 1\n", `switchboard.yaml line 2: unknown field "persnoa" in slack`},
		{"slack:\n  ack: later\n", `slack.ack: "later" must be deferred or inline`},
		{"slack:\n  allow_bots: yes please\n", `line 2: slack.allow_bots: "yes please" must be true or false`},
		{"slack:\n  streaming:\n    max_age: 10m\n", "slack.streaming.max_age: \"10m\" must be a duration from 30s to 4m50s"},
		{"slack:\n  streaming:\n    update_interval: 90s\n", "slack.streaming.update_interval: \"1m30s\" must be a duration from 1s to 1m"},
		{"slack:\n  streaming:\n    max_age: soon\n", `line 3: slack.streaming.max_age: "soon" must be a duration`},
		{"slack:\n  streaming:\n    edit_interval: 1s\n", `line 3: unknown field "edit_interval" in slack.streaming`},
		{"slack:\n  ack_reaction: two words\n", "slack.ack_reaction"},
		{"slack: [1]\n", "slack: a list must be a mapping"},
		{"slack:\n  files:\n    max_bytes: 5MB\n", "slack.files.max_bytes: \"5MB\" must be a whole number"},
		{"slack:\n  files:\n    max_bytes: 0\n", "slack.files.max_bytes: 0 must be at least 1"},
		{"slack:\n  files:\n    max_count: -1\n", "slack.files.max_count: -1 must be a whole number of at least 0"},
		{"slack:\n  files:\n    types: [pdf]\n", `unknown field "types" in slack.files`},
		{"slack:\n  home_tab: true\n  home_tab: false\n", `"home_tab" is set twice in slack`},
	} {
		_, err := slackConfig(bad.yaml)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one saying %q", bad.yaml, err, bad.want)
		}
		if err != nil && (strings.Contains(err.Error(), "slack.Config") || strings.Contains(err.Error(), "config.")) {
			t.Errorf("%q: error %v names a Go type", bad.yaml, err)
		}
	}
}
