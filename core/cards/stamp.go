package cards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// StampVersion is the version of the Stamped format written by Stamp.
const StampVersion = 1

// Stamped is a card as it was sent: the resolved layout and the data,
// self-contained. It is the content of a "card" entry; it round-trips JSON
// exactly and renders the same before and after, whatever happens to the
// template library afterwards.
type Stamped struct {
	V int `json:"v"`
	// Template is the name the result asked for; Layout.Name is the one
	// used. They differ when the requested template was unknown.
	Template string   `json:"template,omitempty"`
	Layout   Layout   `json:"layout"`
	Title    string   `json:"title,omitempty"`
	Summary  string   `json:"summary,omitempty"`
	Items    []Item   `json:"items"`
	Actions  []Action `json:"actions,omitempty"`
	// Outcome is set after a button was used ("✅ Sent by @alice"); a card
	// with an outcome shows it instead of its buttons.
	Outcome string `json:"outcome,omitempty"`
}

// Stamp validates a result, resolves its template in lib (falling back to
// the default of its kind, then to the generic default), completes the
// actions the template declares, and returns the self-contained card. A nil
// lib means DefaultLibrary. Errors are *ValidationError, for the model.
func Stamp(r *Result, lib *Library) (*Stamped, error) {
	if r == nil {
		return nil, &ValidationError{Problems: []FieldError{{Path: "result", Msg: "required"}}}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if lib == nil {
		lib = sharedDefault
	}
	kind := r.Kind
	t, ok := (*Template)(nil), false
	if r.Template != "" {
		t, ok = lib.Get(r.Template)
	}
	if !ok {
		if kind == "" {
			kind = KindGeneric
		}
		t = lib.Default(kind)
	}
	items := cloneItems(r.Items)
	actions, err := resolveActions(r.Actions, t, items)
	if err != nil {
		return nil, err
	}
	layout := t.Layout
	layout.Name, layout.Kind = t.Name, t.Kind
	layout.Parts = slices.Clone(layout.Parts)
	return &Stamped{
		V:        StampVersion,
		Template: r.Template,
		Layout:   layout,
		Title:    r.Title,
		Summary:  r.Summary,
		Items:    items,
		Actions:  actions,
	}, nil
}

// Fallback reports whether the card was drawn with another layout than the
// template it asked for.
func (s *Stamped) Fallback() bool {
	return s.Template != "" && s.Template != s.Layout.Name
}

// resolveActions lays the result's actions over the template's declared
// ones: declared actions come first, in the template's order; the model may
// relabel them and add arguments, never change the tool they run.
func resolveActions(in []Action, t *Template, items []Item) ([]Action, error) {
	var p problems
	byID := make(map[string]int, len(in))
	for i, a := range in {
		byID[a.ID] = i
	}
	var first *Item
	if len(items) > 0 {
		first = &items[0]
	}
	out := make([]Action, 0, len(in)+len(t.Actions))
	used := make(map[string]bool, len(in))
	for _, spec := range t.Actions {
		i, mentioned := byID[spec.ID]
		if !mentioned && !spec.Auto {
			continue
		}
		a := spec.Action
		a.Args = slices.Clone(spec.Args)
		if mentioned {
			used[spec.ID] = true
			m := in[i]
			path := fmt.Sprintf("actions[%d]", i)
			if m.Kind != "" && m.Kind != spec.Kind {
				p.add(path+".kind", "the template declares %q as kind %q", spec.ID, spec.Kind)
			}
			if m.Tool != "" && m.Tool != spec.Tool {
				p.add(path+".tool", "the template declares %q to run %q", spec.ID, spec.Tool)
			}
			if m.Label != "" {
				a.Label = m.Label
			}
			if m.Style != "" {
				a.Style = m.Style
			}
			if len(m.Args) > 0 {
				a.Args = slices.Clone(m.Args)
			}
			if m.Form != nil {
				a.Form = m.Form
			}
		}
		if first != nil {
			args, err := mergeArgs(a.Args, first, spec.ArgsFrom)
			if err != nil {
				p.add(fmt.Sprintf("actions[%s].args", spec.ID), "%v", err)
			}
			a.Args = args
		}
		out = append(out, a)
	}
	for _, a := range in {
		if used[a.ID] {
			continue
		}
		a.Args = slices.Clone(a.Args)
		out = append(out, a)
	}
	for i := range out {
		out[i].Args = compactJSON(out[i].Args)
		out[i].Form = cloneForm(out[i].Form)
	}
	validateActions(&p, out, true)
	return out, p.result()
}

// compactJSON drops insignificant whitespace so the stored args are the
// same bytes however the model spaced them.
func compactJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	if buf.String() == "null" {
		return nil
	}
	return buf.Bytes()
}

func cloneItems(in []Item) []Item {
	out := make([]Item, len(in))
	for i, it := range in {
		if it.Price != nil {
			p := *it.Price
			it.Price = &p
		}
		if it.Rating != nil {
			r := *it.Rating
			it.Rating = &r
		}
		if it.Sparkline != nil {
			s := *it.Sparkline
			s.Values = slices.Clone(s.Values)
			it.Sparkline = &s
		}
		if it.Done != nil {
			d := *it.Done
			it.Done = &d
		}
		it.Rows = slices.Clone(it.Rows)
		it.Chips = slices.Clone(it.Chips)
		it.Callouts = slices.Clone(it.Callouts)
		it.Sections = slices.Clone(it.Sections)
		it.Changes = slices.Clone(it.Changes)
		out[i] = it
	}
	return out
}

// WithOutcome returns a copy of the card that shows what a click did
// ("✅ Sent by @alice") in place of its buttons. The card itself is not
// changed: entries are never edited, and the outcome is drawn on the
// platform message at delivery.
func (s *Stamped) WithOutcome(text string) *Stamped {
	c := *s
	c.Layout.Parts = slices.Clone(s.Layout.Parts)
	c.Items = cloneItems(s.Items)
	c.Actions = make([]Action, len(s.Actions))
	for i, a := range s.Actions {
		a.Args = slices.Clone(a.Args)
		a.Form = cloneForm(a.Form)
		c.Actions[i] = a
	}
	c.Outcome = text
	return &c
}

// Heading is the card's heading: its icon and its title, or the layout's
// label when the result has no title.
func (s *Stamped) Heading() string {
	l := s.Layout.Normalized()
	title := strings.TrimSpace(s.Title)
	if title == "" {
		title = l.Label
	}
	if l.Icon != "" {
		return l.Icon + " " + title
	}
	return title
}

// Shown returns the items the layout draws and how many it leaves out.
func (s *Stamped) Shown() (items []Item, hidden int) {
	l := s.Layout.Normalized()
	if len(s.Items) <= l.MaxItems {
		return s.Items, 0
	}
	return s.Items[:l.MaxItems], len(s.Items) - l.MaxItems
}

// MoreText is the line that counts items left out.
func MoreText(hidden int) string {
	if hidden == 1 {
		return "+1 more item"
	}
	return fmt.Sprintf("+%d more items", hidden)
}

// ItemColor is the accent colour of an item: its first change's direction
// when the layout asks for it, else the layout colour.
func ItemColor(l Layout, it *Item) int {
	if l.ChangeColor && len(it.Changes) > 0 {
		switch it.Changes[0].Direction {
		case DirectionUp:
			return ColorUp
		case DirectionDown:
			return ColorDown
		}
	}
	return l.Color
}

// actionPrefix starts every card button's action_id / custom_id;
// formPrefix starts those of a button that opens a form, so a platform
// that must answer the click with the form itself (Discord's MODAL
// response) knows before it asks core.
const (
	actionPrefix = "card:"
	formPrefix   = "form:"
)

// MaxEncodedActionIDLen is the longest ActionID returns: within Discord's
// 100-character custom_id and Slack's 255-character action_id.
const MaxEncodedActionIDLen = len(actionPrefix) + 36 + 1 + MaxActionIDLen

// ActionID encodes a card button so a click can be routed back:
// "card:<entry-uuid>:<action-id>".
func ActionID(entryID uuid.UUID, actionID string) string {
	return actionPrefix + entryID.String() + ":" + actionID
}

// FormActionID encodes a card button that opens a form:
// "form:<entry-uuid>:<action-id>", as long as ActionID's.
func FormActionID(entryID uuid.UUID, actionID string) string {
	return formPrefix + entryID.String() + ":" + actionID
}

// ButtonID is the action_id / custom_id of the card's button for a: a
// FormActionID when it opens a form, else an ActionID.
func ButtonID(entryID uuid.UUID, a *Action) string {
	if a.Form != nil {
		return FormActionID(entryID, a.ID)
	}
	return ActionID(entryID, a.ID)
}

// IsFormActionID reports whether s is a FormActionID.
func IsFormActionID(s string) bool {
	_, _, ok := ParseActionID(s)
	return ok && strings.HasPrefix(s, formPrefix)
}

// ParseActionID decodes what ActionID or FormActionID wrote. ok is false
// for anything else, such as the buttons of approvals or questions, which
// use other prefixes.
func ParseActionID(s string) (entryID uuid.UUID, actionID string, ok bool) {
	rest, found := strings.CutPrefix(s, actionPrefix)
	if !found {
		rest, found = strings.CutPrefix(s, formPrefix)
	}
	if !found || len(rest) < 38 || rest[36] != ':' {
		return uuid.Nil, "", false
	}
	idText, act := rest[:36], rest[37:]
	id, err := uuid.Parse(idText)
	if err != nil || id.String() != idText || id == uuid.Nil {
		return uuid.Nil, "", false
	}
	if act == "" || len(act) > MaxActionIDLen || !actionIDPattern.MatchString(act) {
		return uuid.Nil, "", false
	}
	return id, act, true
}

// Action returns the card's action with the given id.
func (s *Stamped) Action(id string) (Action, bool) {
	for _, a := range s.Actions {
		if a.ID == id {
			return a, true
		}
	}
	return Action{}, false
}
