package slacktest

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Shortcuts, modals and workflow steps, as Slack documents them:
//   - a message shortcut sends a message_action payload and a global
//     shortcut a shortcut payload, each with a trigger_id that views.open
//     exchanges once (https://docs.slack.dev/interactivity/implementing-shortcuts);
//   - a submitted modal sends view_submission with the view's state;
//   - a run of an app's custom step sends a function_executed event, which
//     the app ends with functions.completeSuccess (outputs matching the
//     step's output_parameters) or functions.completeError, once
//     (https://docs.slack.dev/reference/events/function_executed).

// View is a modal views.open opened.
type View struct {
	ID        string
	TriggerID string
	// View is the view payload as the app sent it.
	View            json.RawMessage
	CallbackID      string
	PrivateMetadata string
}

// StepCompletion is a functions.completeSuccess or completeError call that
// Slack took.
type StepCompletion struct {
	Execution string
	Success   bool
	// Outputs are completeSuccess's outputs; Error completeError's error.
	Outputs map[string]any
	Error   string
}

// function is one run of a custom step, from FunctionExecuted on.
type function struct {
	outputs []Param // the step's output_parameters
	done    bool
}

// Param is an input or output parameter of a custom step as the
// function_executed event lists it.
type Param struct {
	Name, Type, Title, Description string
	Required                       bool
}

func (p Param) wire() map[string]any {
	return map[string]any{"name": p.Name, "type": p.Type, "title": p.Title, "description": p.Description, "is_required": p.Required}
}

// Views lists the modals opened, in order.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.views...)
}

// StepCompletions lists the custom step runs completed, in order.
func (s *Server) StepCompletions() []StepCompletion {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]StepCompletion(nil), s.completions...)
}

// PersonMessage adds a message a person wrote to the fake's channel (in
// thread, "" for a top-level one) and returns its ts: what
// conversations.replies then returns, as a shortcut's thread.
func (s *Server) PersonMessage(channel, thread, user, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{Channel: channel, TS: s.nextTSLocked(), ThreadTS: thread, User: user, Text: text}
	s.messages = append(s.messages, m)
	s.notifyLocked()
	return m.TS
}

// Shortcut is a shortcut's use, for MessageAction and GlobalShortcut.
type Shortcut struct {
	TeamID, UserID, UserName string
	CallbackID, TriggerID    string
	// Channel, MessageTS, ThreadTS, Author and Text are the message a
	// message shortcut was used on.
	Channel, MessageTS, ThreadTS, Author, Text string
}

func (c *Shortcut) trigger() string {
	if c.TriggerID == "" {
		c.TriggerID = fmt.Sprintf("13345224609.%s.%x", strings.TrimPrefix(c.UserID, "U"), len(c.CallbackID)+len(c.MessageTS)*31)
	}
	return c.TriggerID
}

// MessageAction is the message_action payload of a message shortcut.
func MessageAction(c Shortcut) map[string]any {
	msg := map[string]any{"type": "message", "ts": c.MessageTS, "text": c.Text, "user": c.Author}
	if c.ThreadTS != "" {
		msg["thread_ts"] = c.ThreadTS
	}
	return map[string]any{
		"type":                  "message_action",
		"token":                 "verification-token-unused",
		"action_ts":             "1700000200.000001",
		"team":                  map[string]any{"id": c.TeamID, "domain": "fake"},
		"user":                  map[string]any{"id": c.UserID, "username": c.UserName, "name": c.UserName, "team_id": c.TeamID},
		"channel":               map[string]any{"id": c.Channel, "name": "fake"},
		"is_enterprise_install": false,
		"callback_id":           c.CallbackID,
		"trigger_id":            c.trigger(),
		"response_url":          "https://hooks.slack.test/app/unused",
		"message_ts":            c.MessageTS,
		"message":               msg,
	}
}

// GlobalShortcut is the shortcut payload of a global shortcut.
func GlobalShortcut(c Shortcut) map[string]any {
	return map[string]any{
		"type":                  "shortcut",
		"token":                 "verification-token-unused",
		"action_ts":             "1700000300.000001",
		"team":                  map[string]any{"id": c.TeamID, "domain": "fake"},
		"user":                  map[string]any{"id": c.UserID, "username": c.UserName, "team_id": c.TeamID},
		"is_enterprise_install": false,
		"callback_id":           c.CallbackID,
		"trigger_id":            c.trigger(),
	}
}

// ViewSubmission is the view_submission payload of a modal v the app
// opened, submitted by user with values: block id → action id → the
// element's state (for a plain text input {"type":"plain_text_input",
// "value":…}; for a static select {"type":"static_select",
// "selected_option":{"value":…}}). Use TextValue and SelectValue.
func ViewSubmission(teamID, userID string, v View, values map[string]map[string]any) map[string]any {
	var view map[string]any
	_ = json.Unmarshal(v.View, &view)
	if view == nil {
		view = map[string]any{}
	}
	view["id"], view["team_id"], view["hash"] = v.ID, teamID, "1700000400.abcdef"
	view["state"] = map[string]any{"values": values}
	return map[string]any{
		"type":                  "view_submission",
		"token":                 "verification-token-unused",
		"team":                  map[string]any{"id": teamID, "domain": "fake"},
		"user":                  map[string]any{"id": userID, "username": strings.ToLower(userID), "team_id": teamID},
		"api_app_id":            "A0APP",
		"trigger_id":            "13345224609.view." + v.ID,
		"view":                  view,
		"response_urls":         []any{},
		"is_enterprise_install": false,
	}
}

// TextValue is a plain text input's state in a view_submission.
func TextValue(text string) map[string]any {
	return map[string]any{"type": "plain_text_input", "value": text}
}

// SelectValue is a static select's state in a view_submission.
func SelectValue(value string) map[string]any {
	return map[string]any{"type": "static_select", "selected_option": map[string]any{
		"value": value, "text": map[string]any{"type": "plain_text", "text": value, "emoji": true},
	}}
}

// FunctionExecuted starts a run of the app's custom step callbackID with
// inputs and returns its function_executed event (put it in EventCallback);
// the run waits for functions.completeSuccess or completeError.
func (s *Server) FunctionExecuted(execution, callbackID string, inputParams, outputParams []Param, inputs map[string]any) map[string]any {
	s.mu.Lock()
	if s.functions == nil {
		s.functions = map[string]*function{}
	}
	s.functions[execution] = &function{outputs: outputParams}
	s.mu.Unlock()
	var ins, outs []map[string]any
	for _, p := range inputParams {
		ins = append(ins, p.wire())
	}
	for _, p := range outputParams {
		outs = append(outs, p.wire())
	}
	return map[string]any{
		"type": "function_executed",
		"function": map[string]any{
			"id": "Fn0" + strings.ToUpper(callbackID), "callback_id": callbackID, "title": callbackID, "description": "",
			"type": "app", "input_parameters": ins, "output_parameters": outs, "app_id": s.opts.AppID,
			"date_created": 1694727597, "date_updated": 1698947481, "date_deleted": 0,
		},
		"inputs":                inputs,
		"function_execution_id": execution,
		"workflow_execution_id": "Wx" + execution,
		"event_ts":              "1698958075.998738",
		"bot_access_token":      "xwfp-unused-" + execution,
	}
}

// viewsOpen exchanges a trigger for a modal: each trigger once, a view of
// type modal with a title (at most 24 characters), at most 100 blocks, a
// submit button when it has input blocks, private_metadata of at most 3000
// characters and a callback_id of at most 255.
func (s *Server) viewsOpen(req request) (map[string]any, string) {
	trigger := req.params.Get("trigger_id")
	if trigger == "" {
		return nil, "invalid_trigger_id"
	}
	for _, v := range s.views {
		if v.TriggerID == trigger {
			return nil, "exchanged_trigger_id"
		}
	}
	raw := req.params.Get("view")
	var v struct {
		Type   string                 `json:"type"`
		Title  *struct{ Text string } `json:"title"`
		Submit *struct{ Text string } `json:"submit"`
		Blocks []struct {
			Type string `json:"type"`
		} `json:"blocks"`
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &v) != nil {
		return nil, "invalid_arguments"
	}
	if v.Type != "modal" || v.Title == nil || v.Title.Text == "" || utf8.RuneCountInString(v.Title.Text) > 24 ||
		len(v.Blocks) > 100 || utf8.RuneCountInString(v.PrivateMetadata) > 3000 || len(v.CallbackID) > 255 {
		return nil, "invalid_arguments"
	}
	for _, b := range v.Blocks {
		if b.Type == "input" && (v.Submit == nil || v.Submit.Text == "") {
			return nil, "invalid_arguments"
		}
	}
	if e := checkBlocks(mustBlocks(raw)); e != "" {
		return nil, e
	}
	if e := checkInputBlocks(mustBlocks(raw)); e != "" {
		return nil, e
	}
	view := View{ID: fmt.Sprintf("V%06d", len(s.views)+1), TriggerID: trigger, View: json.RawMessage(raw), CallbackID: v.CallbackID, PrivateMetadata: v.PrivateMetadata}
	s.views = append(s.views, view)
	return map[string]any{"view": map[string]any{"id": view.ID, "team_id": s.opts.TeamID, "type": "modal", "callback_id": v.CallbackID}}, ""
}

// mustBlocks is the blocks array of a view, as text.
func mustBlocks(view string) string {
	var v struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	_ = json.Unmarshal([]byte(view), &v)
	return string(v.Blocks)
}

// functionsComplete ends a custom step run: function_execution_not_found
// for a run FunctionExecuted did not start, execution_not_in_running_state
// for one completed already; completeSuccess's outputs must hold every
// required output parameter (parameter_validation_failed otherwise), and
// completeError needs its error.
func (s *Server) functionsComplete(success bool) handler {
	return func(req request) (map[string]any, string) {
		id := req.params.Get("function_execution_id")
		f, ok := s.functions[id]
		if id == "" || !ok {
			return nil, "function_execution_not_found"
		}
		if f.done {
			return nil, "execution_not_in_running_state"
		}
		c := StepCompletion{Execution: id, Success: success}
		if success {
			if json.Unmarshal([]byte(req.params.Get("outputs")), &c.Outputs) != nil {
				return nil, "parameter_validation_failed"
			}
			for _, p := range f.outputs {
				if v, ok := c.Outputs[p.Name]; p.Required && (!ok || v == nil || v == "") {
					return nil, "parameter_validation_failed"
				}
			}
		} else {
			c.Error = req.params.Get("error")
			if c.Error == "" {
				return nil, "invalid_arguments"
			}
		}
		f.done = true
		s.completions = append(s.completions, c)
		return map[string]any{}, ""
	}
}

// checkInputBlocks applies the limits of input blocks: a label of at most
// 2000 characters and an element; a static select of 1 to 100 options,
// each text at most 75 characters and value at most 150; a plain text
// input's max_length at most 3000.
func checkInputBlocks(raw string) string {
	var blocks []struct {
		Type    string      `json:"type"`
		BlockID string      `json:"block_id"`
		Label   *textObject `json:"label"`
		Element *struct {
			Type      string `json:"type"`
			ActionID  string `json:"action_id"`
			MaxLength int    `json:"max_length"`
			Options   []struct {
				Text  *textObject `json:"text"`
				Value string      `json:"value"`
			} `json:"options"`
		} `json:"element"`
	}
	if json.Unmarshal([]byte(raw), &blocks) != nil {
		return "invalid_blocks_format"
	}
	for _, b := range blocks {
		if b.Type != "input" {
			continue
		}
		if b.Label == nil || b.Label.Text == "" || utf8.RuneCountInString(b.Label.Text) > 2000 || b.Element == nil || len(b.BlockID) > 255 {
			return "invalid_blocks"
		}
		switch b.Element.Type {
		case "static_select":
			if len(b.Element.Options) == 0 || len(b.Element.Options) > 100 {
				return "invalid_blocks"
			}
			for _, o := range b.Element.Options {
				if o.Text == nil || o.Text.Text == "" || utf8.RuneCountInString(o.Text.Text) > 75 || o.Value == "" || len(o.Value) > 150 {
					return "invalid_blocks"
				}
			}
		case "plain_text_input":
			if b.Element.MaxLength > 3000 {
				return "invalid_blocks"
			}
		}
	}
	return ""
}
