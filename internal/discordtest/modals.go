package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// Modals. An app answers a command or a component interaction with a
// MODAL response (type 9); the fake checks it against Discord's documented
// structure and limits (receiving-and-responding, "Modal"; the component
// reference of Label, Text Input, String Select and Text Display) and
// records it on the interaction. SubmitModal then plays the person who
// fills it in: a MODAL_SUBMIT interaction (type 5) whose data holds each
// Label's child with its custom_id and the answer, as Discord sends it,
// with the message the modal was opened from.

// Modal is a modal an app answered an interaction with.
type Modal struct {
	CustomID   string            `json:"custom_id"`
	Title      string            `json:"title"`
	Components []json.RawMessage `json:"components"`
}

// ModalInput is one input of a modal, as the fake reads it.
type ModalInput struct {
	Label    string
	Type     int // 3 string select, 4 text input
	CustomID string
	Style    int
	Value    string   // a text input's pre-filled value
	Defaults []string // a select's options shown as chosen
	Options  []string // a select's option values
	Required bool
}

type modalChild struct {
	Type        int    `json:"type"`
	CustomID    string `json:"custom_id"`
	Style       int    `json:"style"`
	Label       string `json:"label"`
	Value       string `json:"value"`
	Placeholder string `json:"placeholder"`
	MinLength   *int   `json:"min_length"`
	MaxLength   *int   `json:"max_length"`
	Required    *bool  `json:"required"`
	MinValues   *int   `json:"min_values"`
	MaxValues   *int   `json:"max_values"`
	Disabled    *bool  `json:"disabled"`
	Options     []struct {
		Label   string `json:"label"`
		Value   string `json:"value"`
		Default bool   `json:"default"`
	} `json:"options"`
	Content string `json:"content"`
}

type modalTop struct {
	Type        int             `json:"type"`
	Label       string          `json:"label"`
	Description string          `json:"description"`
	Component   *modalChild     `json:"component"`
	Components  []modalChild    `json:"components"`
	Content     string          `json:"content"`
	Raw         json.RawMessage `json:"-"`
}

// Inputs lists the modal's inputs in order: the children of its Labels
// (and of legacy Action Rows).
func (m *Modal) Inputs() []ModalInput {
	var out []ModalInput
	add := func(label string, c *modalChild) {
		in := ModalInput{Label: label, Type: c.Type, CustomID: c.CustomID, Style: c.Style, Value: c.Value, Required: c.Required == nil || *c.Required}
		for _, o := range c.Options {
			in.Options = append(in.Options, o.Value)
			if o.Default {
				in.Defaults = append(in.Defaults, o.Value)
			}
		}
		out = append(out, in)
	}
	for _, raw := range m.Components {
		var t modalTop
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		switch {
		case t.Type == 18 && t.Component != nil:
			add(t.Label, t.Component)
		case t.Type == int(discordgo.ActionsRowComponent):
			for k := range t.Components {
				add(t.Components[k].Label, &t.Components[k])
			}
		}
	}
	return out
}

func runesOver(s string, max int) bool { return utf8.RuneCountInString(s) > max }

// checkModal checks a MODAL response's data as Discord does.
func checkModal(m *Modal) *formError {
	switch {
	case m.CustomID == "" || runesOver(m.CustomID, 100):
		return invalid("data.custom_id", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	case m.Title == "" || runesOver(m.Title, 45):
		return invalid("data.title", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length.")
	case len(m.Components) == 0 || len(m.Components) > 5:
		return invalid("data.components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
	}
	ids := map[string]bool{}
	for k, raw := range m.Components {
		path := fmt.Sprintf("data.components.%d", k)
		var t modalTop
		if err := json.Unmarshal(raw, &t); err != nil {
			return invalid(path, "MODEL_TYPE_CONVERT", "Could not interpret the component.")
		}
		switch t.Type {
		case 10: // Text Display
			if t.Content == "" {
				return invalid(path+".content", "BASE_TYPE_REQUIRED", "This field is required")
			}
		case 18: // Label
			if t.Label == "" || runesOver(t.Label, 45) {
				return invalid(path+".label", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length.")
			}
			if runesOver(t.Description, 100) {
				return invalid(path+".description", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
			}
			if t.Component == nil {
				return invalid(path+".component", "BASE_TYPE_REQUIRED", "This field is required")
			}
			if e := checkModalChild(path+".component", t.Component, true, ids); e != nil {
				return e
			}
		case int(discordgo.ActionsRowComponent): // legacy: one text input
			if len(t.Components) != 1 || t.Components[0].Type != int(discordgo.TextInputComponent) {
				return invalid(path+".components", "COMPONENT_LAYOUT_WIDTH_EXCEEDED", "An action row in a modal holds one text input.")
			}
			if e := checkModalChild(path+".components.0", &t.Components[0], false, ids); e != nil {
				return e
			}
		default:
			return invalid(path+".type", "COMPONENT_TYPE_INVALID", "Component type %d is not allowed in a modal.", t.Type)
		}
	}
	return nil
}

func checkModalChild(path string, c *modalChild, inLabel bool, ids map[string]bool) *formError {
	if c.CustomID == "" || runesOver(c.CustomID, 100) {
		return invalid(path+".custom_id", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	}
	if ids[c.CustomID] {
		return invalid(path+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated")
	}
	ids[c.CustomID] = true
	switch c.Type {
	case int(discordgo.TextInputComponent):
		if c.Style != 1 && c.Style != 2 {
			return invalid(path+".style", "BASE_TYPE_CHOICES", "Value must be one of {1, 2}.")
		}
		if !inLabel && (c.Label == "" || runesOver(c.Label, 45)) {
			return invalid(path+".label", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length.")
		}
		if c.MinLength != nil && (*c.MinLength < 0 || *c.MinLength > 4000) {
			return invalid(path+".min_length", "NUMBER_TYPE_MAX", "int value should be between 0 and 4000.")
		}
		if c.MaxLength != nil && (*c.MaxLength < 1 || *c.MaxLength > 4000) {
			return invalid(path+".max_length", "NUMBER_TYPE_MAX", "int value should be between 1 and 4000.")
		}
		if runesOver(c.Value, 4000) || (c.MaxLength != nil && runesOver(c.Value, *c.MaxLength)) {
			return invalid(path+".value", "BASE_TYPE_MAX_LENGTH", "The value is longer than allowed.")
		}
		if runesOver(c.Placeholder, 100) {
			return invalid(path+".placeholder", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
		}
	case int(discordgo.SelectMenuComponent):
		if !inLabel {
			return invalid(path, "COMPONENT_TYPE_INVALID", "A string select in a modal must be in a Label.")
		}
		if c.Disabled != nil {
			return invalid(path+".disabled", "COMPONENT_TYPE_INVALID", "Modals can not have disabled components.")
		}
		if len(c.Options) == 0 || len(c.Options) > 25 {
			return invalid(path+".options", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 25 in length.")
		}
		if runesOver(c.Placeholder, 150) {
			return invalid(path+".placeholder", "BASE_TYPE_MAX_LENGTH", "Must be 150 or fewer in length.")
		}
		required := c.Required == nil || *c.Required
		if c.MinValues != nil && (*c.MinValues < 0 || *c.MinValues > 25 || (required && *c.MinValues < 1)) {
			return invalid(path+".min_values", "BASE_TYPE_BAD_VALUE", "min_values must be at least 1 when the select is required, and at most 25.")
		}
		maxV := 1
		if c.MaxValues != nil {
			maxV = *c.MaxValues
		}
		if maxV < 1 || maxV > 25 || maxV > len(c.Options) {
			return invalid(path+".max_values", "BASE_TYPE_BAD_VALUE", "max_values must be between 1 and the number of options.")
		}
		defaults := 0
		for j, o := range c.Options {
			if o.Label == "" || runesOver(o.Label, 100) || o.Value == "" || runesOver(o.Value, 100) {
				return invalid(fmt.Sprintf("%s.options.%d", path, j), "BASE_TYPE_BAD_LENGTH", "Option label and value must be between 1 and 100 in length.")
			}
			if o.Default {
				defaults++
			}
		}
		if defaults > maxV {
			return invalid(path+".options", "SELECT_COMPONENT_TOO_MANY_DEFAULT_VALUES", "More options are marked default than max_values allows.")
		}
	default:
		return invalid(path+".type", "COMPONENT_TYPE_INVALID", "Component type %d cannot be a modal input.", c.Type)
	}
	return nil
}

// modalResultLocked takes a MODAL response to in.
func (s *Server) modalResultLocked(in *Interaction, body []byte) (int, any) {
	if in.Type == discordgo.InteractionModalSubmit || in.Type == discordgo.InteractionPing {
		return http.StatusBadRequest, errBody(50035, "Invalid Form Body: type: a modal cannot answer a modal submission or a ping")
	}
	var resp struct {
		Data *Modal `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || resp.Data == nil {
		return http.StatusBadRequest, errBody(50035, "Invalid Form Body: data: a modal needs its data")
	}
	if e := checkModal(resp.Data); e != nil {
		return http.StatusBadRequest, e.body()
	}
	in.Modal = resp.Data
	in.ResponseType = discordgo.InteractionResponseModal
	return http.StatusNoContent, nil
}

// ModalSubmitInteraction registers the submission of the modal that
// opened answered (its Modal) and returns the MODAL_SUBMIT payload without
// sending it. answers are by input custom_id: a text input's value, a
// select's chosen values; an input left out is submitted empty. It panics
// on an answer Discord's client could not send (an input the modal does
// not have, a value that is not one of a select's options).
func (s *Server) ModalSubmitInteraction(opened *Interaction, user discordgo.User, answers map[string][]string) (*Interaction, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src, ok := s.interactions[opened.ID]
	if !ok || src.Modal == nil {
		panic("discordtest: ModalSubmitInteraction of an interaction answered without a modal")
	}
	inputs := src.Modal.Inputs()
	known := map[string]bool{}
	id := 100
	var comps []map[string]any
	for _, mi := range inputs {
		known[mi.CustomID] = true
		id++
		child := map[string]any{"type": mi.Type, "id": id + 1, "custom_id": mi.CustomID}
		ans := answers[mi.CustomID]
		if mi.Type == int(discordgo.SelectMenuComponent) {
			vals := []string{}
			for _, v := range ans {
				found := false
				for _, o := range mi.Options {
					found = found || o == v
				}
				if !found {
					panic(fmt.Sprintf("discordtest: %q is not an option of %s", v, mi.CustomID))
				}
				vals = append(vals, v)
			}
			child["values"] = vals
		} else {
			v := ""
			if len(ans) > 0 {
				v = ans[0]
			}
			child["value"] = v
		}
		comps = append(comps, map[string]any{"type": 18, "id": id, "component": child})
		id++
	}
	for k := range answers {
		if !known[k] {
			panic("discordtest: the modal has no input " + k)
		}
	}
	in := s.newInteractionLocked(discordgo.InteractionModalSubmit, src.ChannelID, src.GuildID)
	in.MessageID = src.MessageID
	payload := s.interactionPayloadLocked(in, user, map[string]any{"custom_id": src.Modal.CustomID, "components": comps})
	if m, ok := s.messages[src.MessageID]; ok {
		payload["message"] = m.wire()
	}
	b, _ := json.Marshal(payload)
	c := *in
	return &c, b
}

// SubmitModal sends INTERACTION_CREATE for the submission of the modal
// that opened answered.
func (s *Server) SubmitModal(opened *Interaction, user discordgo.User, answers map[string][]string) *Interaction {
	in, payload := s.ModalSubmitInteraction(opened, user, answers)
	s.Dispatch("INTERACTION_CREATE", json.RawMessage(payload))
	return in
}
