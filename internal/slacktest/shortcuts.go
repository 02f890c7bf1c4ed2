package slacktest

import (
	"encoding/json"
	"fmt"
	"strings"
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
