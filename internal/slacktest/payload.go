package slacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Sign returns the X-Slack-Signature value Slack would send for body at ts
// (v0, HMAC-SHA256 over "v0:<unix ts>:<body>").
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts.Unix())
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// NewSignedRequest builds a POST to target as Slack sends it: the body, its
// content type, and the timestamp and signature headers.
func NewSignedRequest(target, contentType, secret string, ts time.Time, body []byte) *http.Request {
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		panic(fmt.Sprintf("slacktest: building request to %q: %v", target, err))
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(secret, ts, body))
	return req
}

// EventCallback wraps an inner event (app_mention, message, ...) in the
// Events API envelope that both the HTTP endpoint and Socket Mode carry.
func EventCallback(teamID, eventID string, event map[string]any) map[string]any {
	return map[string]any{
		"token":          "verification-token-unused",
		"team_id":        teamID,
		"api_app_id":     "A0APP",
		"type":           "event_callback",
		"event_id":       eventID,
		"event_time":     1700000000,
		"event":          event,
		"authorizations": []map[string]any{{"team_id": teamID, "user_id": "U0BOT", "is_bot": true}},
	}
}

// MustJSON marshals v or panics; for building request bodies in tests.
func MustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("slacktest: marshalling: %v", err))
	}
	return b
}

// Click describes a button press for BlockActions.
type Click struct {
	TeamID    string
	UserID    string
	UserName  string
	Channel   string
	MessageTS string
	ThreadTS  string
	ActionID  string
	Value     string
	Label     string
	TriggerID string
	// Blocks are the clicked message's blocks as Slack echoes them back.
	Blocks json.RawMessage
	Text   string
}

// BlockActions builds the block_actions payload Slack sends for a click.
func BlockActions(c Click) map[string]any {
	if c.TriggerID == "" {
		c.TriggerID = "trig-" + c.MessageTS + "-" + c.ActionID
	}
	msg := map[string]any{"type": "message", "ts": c.MessageTS, "text": c.Text, "user": "U0BOT", "bot_id": "B0BOT"}
	if c.ThreadTS != "" {
		msg["thread_ts"] = c.ThreadTS
	}
	if len(c.Blocks) > 0 {
		msg["blocks"] = c.Blocks
	}
	return map[string]any{
		"type":       "block_actions",
		"team":       map[string]any{"id": c.TeamID, "domain": "fake"},
		"user":       map[string]any{"id": c.UserID, "username": c.UserName, "name": c.UserName, "team_id": c.TeamID},
		"api_app_id": "A0APP",
		"token":      "verification-token-unused",
		"trigger_id": c.TriggerID,
		"container": map[string]any{
			"type": "message", "message_ts": c.MessageTS, "channel_id": c.Channel, "is_ephemeral": false, "thread_ts": c.ThreadTS,
		},
		"channel":      map[string]any{"id": c.Channel, "name": "fake"},
		"message":      msg,
		"response_url": "https://hooks.slack.test/actions/unused",
		"actions": []map[string]any{{
			"type":      "button",
			"action_id": c.ActionID,
			"block_id":  "b1",
			"value":     c.Value,
			"text":      map[string]any{"type": "plain_text", "text": c.Label, "emoji": true},
			"action_ts": "1700000100.000001",
		}},
		"state": map[string]any{"values": map[string]any{}},
	}
}

// InteractionForm encodes a payload as the form body Slack posts to the
// interactivity request URL (payload=<json>).
func InteractionForm(payload any) []byte {
	return []byte(url.Values{"payload": {string(MustJSON(payload))}}.Encode())
}

// FromTeam marks an inner event as written by a user of another team, the
// way Slack delivers a message in a channel shared between teams (Slack
// Connect): user_team and source_team name the author's own team, while
// the envelope's team_id stays the receiving team's. It returns event.
func FromTeam(event map[string]any, team string) map[string]any {
	event["user_team"] = team
	event["source_team"] = team
	return event
}

// Command is a slash command invocation for SlashCommand.
type Command struct {
	TeamID, ChannelID, UserID, UserName string
	Command, Text, TriggerID            string
}

// SlashCommand is what Slack sends for a slash command: the fields of the
// form posted to the command's request URL (HTTP), or the payload of a
// slash_commands envelope (Socket Mode).
func SlashCommand(c Command) url.Values {
	if c.TriggerID == "" {
		c.TriggerID = "trig-cmd-" + c.UserID + "-" + strconv.Itoa(len(c.Text))
	}
	return url.Values{
		"token": {"verification-token-unused"}, "team_id": {c.TeamID}, "team_domain": {"fake"},
		"channel_id": {c.ChannelID}, "channel_name": {"fake"}, "user_id": {c.UserID}, "user_name": {c.UserName},
		"command": {c.Command}, "text": {c.Text}, "api_app_id": {"A0APP"}, "trigger_id": {c.TriggerID},
		"response_url": {"https://hooks.slack.test/commands/unused"},
	}
}

// SlashCommandPayload is SlashCommand as the JSON object a Socket Mode
// envelope carries.
func SlashCommandPayload(c Command) map[string]string {
	out := map[string]string{}
	for k, v := range SlashCommand(c) {
		out[k] = v[0]
	}
	return out
}
