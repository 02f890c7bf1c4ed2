package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"
)

// Modals. views.open takes a trigger_id (from an interaction, usable once)
// and a modal view, checked against Slack's documented limits
// (https://docs.slack.dev/reference/views/modal-views and the Block Kit
// reference of input blocks and their elements); the fake records each
// view it opened (Views). ViewSubmission then plays the person who fills
// the modal in and presses its submit button: the view_submission
// payload Slack posts to the app, and PostInteractivity posts it signed,
// as Slack does, returning the app's answer (response_action).

// View is a modal the app opened.
type View struct {
	ID        string
	TeamID    string
	TriggerID string
	// CallbackID, PrivateMetadata, Title and Submit are the view's fields;
	// Blocks its blocks as sent.
	CallbackID      string
	PrivateMetadata string
	Title, Submit   string
	Blocks          []json.RawMessage
	// Raw is the view as the app sent it.
	Raw json.RawMessage
}

type viewState struct {
	seq      int
	opened   []View
	triggers map[string]bool // spent trigger ids
}

// Views returns the modals opened so far, oldest first.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.views.opened...)
}

// WaitViews waits until n modals were opened and returns them.
func (s *Server) WaitViews(n int, timeout time.Duration) ([]View, error) {
	var out []View
	ok := s.waitFor(timeout, func() bool {
		out = append([]View(nil), s.views.opened...)
		return len(out) >= n
	})
	if !ok {
		return out, fmt.Errorf("slacktest: %d views opened after %s, want %d", len(out), timeout, n)
	}
	return out, nil
}

// Slack's limits on a modal and its input blocks.
const (
	maxModalTitle      = 24
	maxModalButton     = 24
	maxModalBlocks     = 100
	maxCallbackID      = 255
	maxPrivateMetadata = 3000
	maxBlockID         = 255
	maxActionID        = 255
	maxInputLabel      = 2000
	maxPlaceholder     = 150
	maxStaticOptions   = 100
	maxOptionText      = 75
	maxOptionValue     = 150
	maxTextInputLength = 3000
)

type plainObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type optionObject struct {
	Text  plainObject `json:"text"`
	Value string      `json:"value"`
}

type inputElement struct {
	Type           string          `json:"type"`
	ActionID       string          `json:"action_id"`
	Placeholder    *plainObject    `json:"placeholder"`
	Options        []optionObject  `json:"options"`
	InitialOption  *optionObject   `json:"initial_option"`
	InitialOptions []optionObject  `json:"initial_options"`
	InitialDate    string          `json:"initial_date"`
	InitialTime    string          `json:"initial_time"`
	InitialValue   string          `json:"initial_value"`
	MaxLength      int             `json:"max_length"`
	MinLength      int             `json:"min_length"`
	MinValue       string          `json:"min_value"`
	MaxValue       string          `json:"max_value"`
	IsDecimal      *bool           `json:"is_decimal_allowed"`
	Raw            json.RawMessage `json:"-"`
}

type viewBlock struct {
	Type     string        `json:"type"`
	BlockID  string        `json:"block_id"`
	Label    *plainObject  `json:"label"`
	Element  *inputElement `json:"element"`
	Optional bool          `json:"optional"`
}

type modalView struct {
	Type            string            `json:"type"`
	Title           *plainObject      `json:"title"`
	Submit          *plainObject      `json:"submit"`
	Close           *plainObject      `json:"close"`
	Blocks          []json.RawMessage `json:"blocks"`
	CallbackID      string            `json:"callback_id"`
	PrivateMetadata string            `json:"private_metadata"`
}

func plainOK(t *plainObject, max int) bool {
	return t != nil && t.Type == "plain_text" && t.Text != "" && utf8.RuneCountInString(t.Text) <= max
}

// checkModal answers "" for a modal Slack would open, else the error.
func checkModal(v *modalView) string {
	if v.Type != "modal" || !plainOK(v.Title, maxModalTitle) {
		return "invalid_arguments"
	}
	if len(v.Blocks) == 0 || len(v.Blocks) > maxModalBlocks {
		return "invalid_arguments"
	}
	if (v.Submit != nil && !plainOK(v.Submit, maxModalButton)) || (v.Close != nil && !plainOK(v.Close, maxModalButton)) {
		return "invalid_arguments"
	}
	if len(v.CallbackID) > maxCallbackID || len(v.PrivateMetadata) > maxPrivateMetadata {
		return "invalid_arguments"
	}
	ids := map[string]bool{}
	inputs := 0
	for _, raw := range v.Blocks {
		var b viewBlock
		if json.Unmarshal(raw, &b) != nil {
			return "invalid_blocks"
		}
		if b.BlockID != "" {
			if ids[b.BlockID] || len(b.BlockID) > maxBlockID {
				return "invalid_blocks"
			}
			ids[b.BlockID] = true
		}
		if b.Type != "input" {
			continue
		}
		inputs++
		if !plainOK(b.Label, maxInputLabel) || b.Element == nil || checkElement(b.Element) != "" {
			return "invalid_blocks"
		}
	}
	// "must define submit to use an input block in modals"
	if inputs > 0 && v.Submit == nil {
		return "invalid_arguments"
	}
	return ""
}

func checkElement(e *inputElement) string {
	if e.ActionID == "" || len(e.ActionID) > maxActionID {
		return "invalid_blocks"
	}
	if e.Placeholder != nil && !plainOK(e.Placeholder, maxPlaceholder) {
		return "invalid_blocks"
	}
	option := func(o optionObject) bool {
		return plainOK(&o.Text, maxOptionText) && o.Value != "" && len(o.Value) <= maxOptionValue
	}
	has := func(o optionObject) bool {
		for _, x := range e.Options {
			if x.Value == o.Value {
				return true
			}
		}
		return false
	}
	switch e.Type {
	case "static_select", "multi_static_select":
		if len(e.Options) == 0 || len(e.Options) > maxStaticOptions {
			return "invalid_blocks"
		}
		for _, o := range e.Options {
			if !option(o) {
				return "invalid_blocks"
			}
		}
		if e.InitialOption != nil && (e.Type != "static_select" || !has(*e.InitialOption)) {
			return "invalid_blocks"
		}
		for _, o := range e.InitialOptions {
			if e.Type != "multi_static_select" || !has(o) {
				return "invalid_blocks"
			}
		}
	case "datepicker":
		if e.InitialDate != "" {
			if _, err := time.Parse("2006-01-02", e.InitialDate); err != nil {
				return "invalid_blocks"
			}
		}
	case "timepicker":
		if e.InitialTime != "" {
			if _, err := time.Parse("15:04", e.InitialTime); err != nil {
				return "invalid_blocks"
			}
		}
	case "plain_text_input":
		if e.MaxLength < 0 || e.MaxLength > maxTextInputLength || e.MinLength < 0 || e.MinLength > maxTextInputLength {
			return "invalid_blocks"
		}
	case "number_input":
		if e.IsDecimal == nil { // required
			return "invalid_blocks"
		}
	default:
		return "invalid_blocks"
	}
	return ""
}

func (s *Server) viewsOpen(req request) (map[string]any, string) {
	trigger := req.params.Get("trigger_id")
	if trigger == "" {
		return nil, "invalid_arguments"
	}
	if s.views.triggers[trigger] {
		return nil, "exchanged_trigger_id"
	}
	raw := req.params.Get("view")
	var v modalView
	if json.Unmarshal([]byte(raw), &v) != nil {
		return nil, "invalid_arguments"
	}
	if e := checkModal(&v); e != "" {
		return nil, e
	}
	if s.views.triggers == nil {
		s.views.triggers = map[string]bool{}
	}
	s.views.triggers[trigger] = true
	s.views.seq++
	team := s.opts.TeamID
	if t := s.teamLocked(req.token); t != nil {
		team = t.ID
	}
	view := View{
		ID: fmt.Sprintf("V%07d", s.views.seq), TeamID: team, TriggerID: trigger,
		CallbackID: v.CallbackID, PrivateMetadata: v.PrivateMetadata, Title: v.Title.Text,
		Blocks: v.Blocks, Raw: json.RawMessage(raw),
	}
	if v.Submit != nil {
		view.Submit = v.Submit.Text
	}
	s.views.opened = append(s.views.opened, view)
	return map[string]any{"view": view.wire()}, ""
}

// wire is the view as Slack returns it and echoes it in interactions.
func (v *View) wire() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(v.Raw, &m)
	m["id"], m["team_id"], m["hash"] = v.ID, v.TeamID, "156772938.1827394"
	m["app_id"], m["bot_id"] = "A0APP", "B0BOT"
	m["state"] = map[string]any{"values": map[string]any{}}
	return m
}

// Submitter is who submits a modal in ViewSubmission.
type Submitter struct {
	TeamID, UserID, UserName string
}

// ViewSubmission builds the view_submission payload Slack sends when the
// person submits v with the answers given by block_id (one string; the
// option values for a multi_static_select). Every input block has its
// state, as in Slack: the elements left empty as null. It panics on an
// answer no Slack client could give (a block the view does not have, a
// select value that is not one of its options).
func ViewSubmission(v View, by Submitter, answers map[string][]string) map[string]any {
	values := map[string]any{}
	known := map[string]bool{}
	for _, raw := range v.Blocks {
		var b viewBlock
		if json.Unmarshal(raw, &b) != nil || b.Type != "input" || b.Element == nil {
			continue
		}
		known[b.BlockID] = true
		e := b.Element
		ans, given := answers[b.BlockID]
		state := map[string]any{"type": e.Type}
		optionOf := func(val string) map[string]any {
			for _, o := range e.Options {
				if o.Value == val {
					return map[string]any{"text": o.Text, "value": o.Value}
				}
			}
			panic(fmt.Sprintf("slacktest: %q is not an option of block %s", val, b.BlockID))
		}
		first := func() any {
			if !given || len(ans) == 0 {
				return nil
			}
			return ans[0]
		}
		switch e.Type {
		case "static_select":
			state["selected_option"] = nil
			if v := first(); v != nil {
				state["selected_option"] = optionOf(v.(string))
			}
		case "multi_static_select":
			sel := []any{}
			for _, a := range ans {
				sel = append(sel, optionOf(a))
			}
			state["selected_options"] = sel
		case "datepicker":
			state["selected_date"] = first()
		case "timepicker":
			state["selected_time"] = first()
			state["timezone"] = "Europe/Lisbon"
		default: // plain_text_input, number_input
			state["value"] = first()
		}
		values[b.BlockID] = map[string]any{e.ActionID: state}
	}
	for id := range answers {
		if !known[id] {
			panic("slacktest: the view has no input block " + id)
		}
	}
	view := v.wire()
	view["state"] = map[string]any{"values": values}
	return map[string]any{
		"type":                  "view_submission",
		"team":                  map[string]any{"id": by.TeamID, "domain": "fake"},
		"user":                  map[string]any{"id": by.UserID, "username": by.UserName, "name": by.UserName, "team_id": by.TeamID},
		"api_app_id":            "A0APP",
		"token":                 "verification-token-unused",
		"trigger_id":            "trig-submit-" + v.ID,
		"view":                  view,
		"response_urls":         []any{},
		"is_enterprise_install": false,
	}
}

// PostInteractivity posts an interaction payload to the app's
// interactivity request URL, form-encoded and signed with secret at ts as
// Slack does, and returns the status and the body the app answered
// (a view_submission's response_action).
func PostInteractivity(client *http.Client, target, secret string, ts time.Time, payload any) (int, []byte, error) {
	req := NewSignedRequest(target, "application/x-www-form-urlencoded", secret, ts, InteractionForm(payload))
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("posting an interaction: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, body, fmt.Errorf("reading the answer to an interaction: %w", err)
	}
	return resp.StatusCode, body, nil
}
