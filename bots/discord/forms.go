package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots/mdsplit"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
)

// Card forms on Discord. A card button that opens a form has a custom_id
// of cards.FormActionID, so the click is answered with the form itself: a
// MODAL response (type 9), which must be the click's first response. Each
// input is a Label (type 18) around a text input (type 4) or a string
// select (type 3), as Discord documents for modals
// (https://discord.com/developers/docs/components/using-modal-components);
// Discord has no date, time or number control, so those are text inputs
// whose answers core checks. The submission (MODAL_SUBMIT) goes to core
// with the answers. Discord cannot keep a modal open on a submission
// (MODAL is not a valid response to MODAL_SUBMIT), so wrong answers are
// answered with an ephemeral message that says what to fix, shows the
// answers given, and has a button that opens the modal again filled in
// with them. discordgo (v0.29) knows no Label component and fails to
// decode a submission holding one, so submissions are read from the raw
// interaction (onRawInteraction, and the HTTP endpoint's body).

// OpensForms reports that Discord opens card forms in modals.
func (a *Adapter) OpensForms() bool { return true }

// Discord's modal limits.
const (
	maxModalTitle       = 45
	maxModalLabel       = 45
	maxModalPlaceholder = 100
	maxTextInputLen     = 4000
	maxSelectOption     = 100
	maxFieldValue       = 1024

	componentLabel = 18

	// answersTitle names the embed of an ephemeral "fix your answers"
	// message: its fields are the answers given, one per input in the
	// form's order, read back to fill the modal in again.
	answersTitle = "Your answers"
	// fixLabel is that message's button, which opens the form again.
	fixLabel = "Fix my answers"
)

// modalLabel is a Label component: a modal input with its question.
type modalLabel struct {
	Label       string                     `json:"label"`
	Description string                     `json:"description,omitempty"`
	Component   discordgo.MessageComponent `json:"component"`
}

func (modalLabel) Type() discordgo.ComponentType { return componentLabel }

func (l modalLabel) MarshalJSON() ([]byte, error) {
	type label modalLabel
	return json.Marshal(struct {
		Type discordgo.ComponentType `json:"type"`
		label
	}{componentLabel, label(l)})
}

// modalTextInput is a text input inside a Label, without the deprecated
// label of its own.
type modalTextInput struct {
	CustomID    string                   `json:"custom_id"`
	Style       discordgo.TextInputStyle `json:"style"`
	Placeholder string                   `json:"placeholder,omitempty"`
	Value       string                   `json:"value,omitempty"`
	Required    bool                     `json:"required"`
	MinLength   int                      `json:"min_length,omitempty"`
	MaxLength   int                      `json:"max_length,omitempty"`
}

func (modalTextInput) Type() discordgo.ComponentType { return discordgo.TextInputComponent }

func (t modalTextInput) MarshalJSON() ([]byte, error) {
	type input modalTextInput
	return json.Marshal(struct {
		Type discordgo.ComponentType `json:"type"`
		input
	}{discordgo.TextInputComponent, input(t)})
}

// modalSelect is a string select inside a Label (never "disabled": a
// modal refuses that field).
type modalSelect struct {
	CustomID    string                       `json:"custom_id"`
	Placeholder string                       `json:"placeholder,omitempty"`
	MinValues   int                          `json:"min_values"`
	MaxValues   int                          `json:"max_values"`
	Required    bool                         `json:"required"`
	Options     []discordgo.SelectMenuOption `json:"options"`
}

func (modalSelect) Type() discordgo.ComponentType { return discordgo.SelectMenuComponent }

func (s modalSelect) MarshalJSON() ([]byte, error) {
	type sel modalSelect
	type option struct {
		Label   string `json:"label"`
		Value   string `json:"value"`
		Default bool   `json:"default,omitempty"`
	}
	opts := make([]option, len(s.Options))
	for i, o := range s.Options {
		opts[i] = option{o.Label, o.Value, o.Default}
	}
	return json.Marshal(struct {
		Type discordgo.ComponentType `json:"type"`
		sel
		Options []option `json:"options"`
	}{discordgo.SelectMenuComponent, sel(s), opts})
}

// FormModal is the MODAL response that shows a card's form, filled in with
// prefill (answers by input name) or else the inputs' initial answers.
func FormModal(customID, title string, f *cards.Form, prefill map[string][]string) *discordgo.InteractionResponse {
	comps := make([]discordgo.MessageComponent, 0, len(f.Inputs))
	for i := range f.Inputs {
		in := &f.Inputs[i]
		vals, ok := prefill[in.Name]
		if !ok {
			vals, _ = in.InitialAnswers()
		}
		comps = append(comps, modalLabel{
			Label:       cards.Truncate(oneLine(in.Label), maxModalLabel),
			Description: cards.Truncate(formHint(in), maxModalPlaceholder),
			Component:   modalInput(in, vals),
		})
	}
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{
			CustomID: customID, Title: cards.Truncate(oneLine(cmpOr(title, "Form")), maxModalTitle), Components: comps,
		},
	}
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// formHint is a Label's description: what a typed answer must look like
// where Discord has no control for it.
func formHint(in *cards.Input) string {
	switch in.Type {
	case cards.InputDate:
		h := "A date as YYYY-MM-DD"
		switch {
		case in.Earliest != "" && in.Latest != "":
			h += ", from " + in.Earliest + " to " + in.Latest
		case in.Earliest != "":
			h += ", on or after " + in.Earliest
		case in.Latest != "":
			h += ", on or before " + in.Latest
		}
		return h
	case cards.InputTime:
		return "A time as HH:MM (24-hour)"
	case cards.InputNumber:
		h := "A whole number"
		if in.Decimal {
			h = "A number"
		}
		switch {
		case in.Min != nil && in.Max != nil:
			h += fmt.Sprintf(" from %g to %g", *in.Min, *in.Max)
		case in.Min != nil:
			h += fmt.Sprintf(" of at least %g", *in.Min)
		case in.Max != nil:
			h += fmt.Sprintf(" of at most %g", *in.Max)
		}
		return h
	}
	return ""
}

func modalInput(in *cards.Input, vals []string) discordgo.MessageComponent {
	first := ""
	if len(vals) > 0 {
		first = vals[0]
	}
	switch in.Type {
	case cards.InputSelect, cards.InputMultiSelect:
		s := modalSelect{
			CustomID: in.Name, Placeholder: cards.Truncate(in.Placeholder, 150), Required: in.Required,
			MinValues: 0, MaxValues: 1,
		}
		if in.Required {
			s.MinValues = 1
		}
		if in.Type == cards.InputMultiSelect {
			s.MaxValues = len(in.Options)
		}
		for _, o := range in.Options {
			def := false
			for _, v := range vals {
				def = def || v == o.Value
			}
			s.Options = append(s.Options, discordgo.SelectMenuOption{
				Label: cards.Truncate(o.Label, maxSelectOption), Value: o.Value, Default: def,
			})
		}
		return s
	}
	t := modalTextInput{
		CustomID: in.Name, Style: discordgo.TextInputShort, Required: in.Required,
		Placeholder: cards.Truncate(in.Placeholder, maxModalPlaceholder), Value: cards.Truncate(first, maxTextInputLen),
	}
	switch in.Type {
	case cards.InputText:
		if in.Multiline {
			t.Style = discordgo.TextInputParagraph
		}
		t.MinLength, t.MaxLength = in.MinLength, in.MaxTextLength()
	case cards.InputDate:
		t.MaxLength = len(cards.DateFormat)
		t.Placeholder = cmpOr(t.Placeholder, "YYYY-MM-DD")
	case cards.InputTime:
		t.MaxLength = len(cards.TimeFormat)
		t.Placeholder = cmpOr(t.Placeholder, "HH:MM")
	case cards.InputNumber:
		t.MaxLength = 32
	}
	return t
}

// planFormButton answers a click on a card button that opens a form: the
// form in a modal (filled in again with the answers of a "fix your
// answers" message, when that is where the click came from), or a private
// note when the card was settled or the form no longer works.
func (a *Adapter) planFormButton(i *discordgo.Interaction) (*discordgo.InteractionResponse, followUp) {
	data := i.MessageComponentData()
	userID, userName := interactionUser(i)
	// The modal must be the click's first answer, within three seconds.
	ctx, cancel := context.WithTimeout(a.ctx, min(a.opts.SubmitTimeout, 2*time.Second))
	res, err := a.opts.Submitter.Act(ctx, &core.Action{
		Platform: Platform, ActionID: data.CustomID, UserID: userID, UserName: userName, At: a.now(),
	})
	cancel()
	switch {
	case errors.Is(err, core.ErrInvalid), errors.Is(err, core.ErrNotPending):
		return ephemeral("This form no longer works."), nil
	case err != nil:
		a.log.ErrorContext(a.ctx, "opening a discord card form", "custom_id", data.CustomID, "err", err)
		return ephemeral("The form could not be opened; please try again."), nil
	case res.Refused:
		return ephemeral(cmpOr(res.Reason, "This form is not yours to answer.")), nil
	case res.Duplicate && res.Settled != nil:
		return ephemeral(settledText(res.Settled)), nil
	case res.Form == nil:
		return ephemeral("This was already decided."), nil
	}
	return FormModal(data.CustomID, res.FormTitle, res.Form, answersOf(i.Message, res.Form)), nil
}

// answersOf reads the answers a "fix your answers" message shows back,
// by input name; nil for any other message.
func answersOf(m *discordgo.Message, f *cards.Form) map[string][]string {
	if m == nil {
		return nil
	}
	for _, e := range m.Embeds {
		if e == nil || e.Title != answersTitle || len(e.Fields) != len(f.Inputs) {
			continue
		}
		out := map[string][]string{}
		for k, field := range e.Fields {
			in := &f.Inputs[k]
			v := field.Value
			if v == emptyAnswer {
				out[in.Name] = nil
				continue
			}
			if in.Type == cards.InputMultiSelect || in.Type == cards.InputSelect {
				for _, label := range strings.Split(v, "\n") {
					for _, o := range in.Options {
						if o.Label == label {
							out[in.Name] = append(out[in.Name], o.Value)
						}
					}
				}
				continue
			}
			out[in.Name] = []string{v}
		}
		return out
	}
	return nil
}

// emptyAnswer stands for an answer left empty in the answers embed
// (Discord refuses an empty field value).
const emptyAnswer = "—"

// modalSubmission is what the adapter reads of a MODAL_SUBMIT: the
// modal's custom_id and the answers by component custom_id.
type modalSubmission struct {
	CustomID string
	Values   map[string][]string
}

type submittedComponent struct {
	Type       discordgo.ComponentType `json:"type"`
	CustomID   string                  `json:"custom_id"`
	Value      *string                 `json:"value"`
	Values     []string                `json:"values"`
	Component  *submittedComponent     `json:"component"`  // in a Label
	Components []submittedComponent    `json:"components"` // in an Action Row
}

// readModalSubmit reads a MODAL_SUBMIT interaction's data from its raw
// JSON: inputs in Labels, or in Action Rows as older modals have them.
func readModalSubmit(raw []byte) (*modalSubmission, error) {
	var body struct {
		Data struct {
			CustomID   string               `json:"custom_id"`
			Components []submittedComponent `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("reading a modal submission: %w", err)
	}
	out := &modalSubmission{CustomID: body.Data.CustomID, Values: map[string][]string{}}
	var walk func(c submittedComponent)
	walk = func(c submittedComponent) {
		switch {
		case c.Component != nil:
			walk(*c.Component)
		case len(c.Components) > 0:
			for _, cc := range c.Components {
				walk(cc)
			}
		case c.CustomID != "" && c.Value != nil:
			out.Values[c.CustomID] = append(out.Values[c.CustomID], *c.Value)
		case c.CustomID != "":
			out.Values[c.CustomID] = append(out.Values[c.CustomID], c.Values...)
		}
	}
	for _, c := range body.Data.Components {
		walk(c)
	}
	return out, nil
}

// planFormSubmit answers a card form's submission: the card updated to
// say who sent it, or, for wrong answers, a private message saying what
// to fix with a button that opens the form again filled in.
func (a *Adapter) planFormSubmit(i *discordgo.Interaction, raw []byte) (*discordgo.InteractionResponse, followUp) {
	sub, err := readModalSubmit(raw)
	if err != nil || !cards.IsFormActionID(sub.CustomID) {
		a.log.Debug("ignoring a discord modal submission", "err", err)
		return ephemeral("This form is not handled here."), nil
	}
	userID, userName := interactionUser(i)
	ctx, cancel := context.WithTimeout(a.ctx, min(a.opts.SubmitTimeout, 2500*time.Millisecond))
	res, err := a.opts.Submitter.Act(ctx, &core.Action{
		Platform: Platform, EventID: "modal:" + i.ID, ActionID: sub.CustomID, Values: sub.Values,
		UserID: userID, UserName: userName, At: a.now(),
	})
	cancel()
	switch {
	case errors.Is(err, core.ErrInvalid), errors.Is(err, core.ErrNotPending):
		return ephemeral("This form no longer works."), nil
	case err != nil:
		a.log.ErrorContext(a.ctx, "handing a discord card form to core", "custom_id", sub.CustomID, "err", err)
		return fixMessage(sub.CustomID, nil, res, sub.Values, "Something went wrong; your answers were not sent. Please send them again."), nil
	case len(res.Invalid) > 0:
		return fixMessage(sub.CustomID, res.Form, res, sub.Values, ""), nil
	case res.Refused:
		return ephemeral(cmpOr(res.Reason, "This form is not yours to answer.")), nil
	case res.Duplicate && res.Settled != nil:
		return ephemeral(settledText(res.Settled)), nil
	case res.Duplicate:
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}, nil
	}
	title := "the form"
	if res.FormTitle != "" {
		title = res.FormTitle
	}
	note := fmt.Sprintf("**%s** — sent by <@%s>", title, userID)
	return sentUpdate(i.Message, note), nil
}

// sentUpdate is the UPDATE_MESSAGE response that marks the message the
// form was opened from as answered: its buttons go, a line says who sent
// the form.
func sentUpdate(m *discordgo.Message, note string) *discordgo.InteractionResponse {
	if m == nil {
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	}
	data := &discordgo.InteractionResponseData{AllowedMentions: noMentions()}
	if m.Flags&discordgo.MessageFlagsIsComponentsV2 != 0 {
		data.Components = withoutRows(m.Components, note)
	} else {
		text := note
		if m.Content != "" {
			room := MaxMessageChars - len([]rune(note)) - 2
			text = mdsplit.Truncate(m.Content, room) + "\n\n" + note
		}
		data.Content, data.Components = text, []discordgo.MessageComponent{}
	}
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage, Data: data}
}

// fixMessage is the private answer to wrong answers: what to fix, the
// answers given (read back by the button), and the button that opens the
// form again.
func fixMessage(customID string, f *cards.Form, res *core.ActionResult, given map[string][]string, text string) *discordgo.InteractionResponse {
	var b strings.Builder
	if text != "" {
		b.WriteString(text)
	} else {
		b.WriteString("Some answers need fixing:")
		names := make([]string, 0, len(res.Invalid))
		for n := range res.Invalid {
			names = append(names, n)
		}
		order := map[string]int{}
		labels := map[string]string{}
		if f != nil {
			for k, in := range f.Inputs {
				order[in.Name], labels[in.Name] = k, in.Label
			}
		}
		sort.Slice(names, func(x, y int) bool { return order[names[x]] < order[names[y]] })
		for _, n := range names {
			fmt.Fprintf(&b, "\n• **%s**: %s", cmpOr(labels[n], n), res.Invalid[n])
		}
	}
	data := &discordgo.InteractionResponseData{
		Content: mdsplit.Truncate(b.String(), MaxMessageChars), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions(),
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: fixLabel, Style: discordgo.PrimaryButton, CustomID: customID},
		}}},
	}
	if f != nil {
		e := &discordgo.MessageEmbed{Title: answersTitle}
		for k := range f.Inputs {
			in := &f.Inputs[k]
			shown := make([]string, 0, len(given[in.Name]))
			for _, v := range given[in.Name] {
				if strings.TrimSpace(v) == "" {
					continue
				}
				if in.Type == cards.InputSelect || in.Type == cards.InputMultiSelect {
					v = in.OptionLabel(v)
				}
				shown = append(shown, v)
			}
			v := strings.Join(shown, "\n")
			if v == "" {
				v = emptyAnswer
			}
			e.Fields = append(e.Fields, &discordgo.MessageEmbedField{
				Name: cards.Truncate(cmpOr(in.Label, in.Name), 256), Value: cards.Truncate(v, maxFieldValue),
			})
		}
		data.Embeds = []*discordgo.MessageEmbed{e}
	}
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource, Data: data}
}

// isModalSubmit peeks at a raw interaction's type.
func isModalSubmit(raw []byte) bool {
	var head struct {
		Type discordgo.InteractionType `json:"type"`
	}
	return json.Unmarshal(raw, &head) == nil && head.Type == discordgo.InteractionModalSubmit
}

// onRawInteraction takes MODAL_SUBMIT interactions from the gateway's raw
// events: discordgo cannot decode their Label components, and
// onInteractionCreate leaves them alone.
func (a *Adapter) onRawInteraction(_ *discordgo.Session, ev *discordgo.Event) {
	if ev == nil || ev.Type != "INTERACTION_CREATE" || !isModalSubmit(ev.RawData) {
		return
	}
	if !a.enter() {
		return
	}
	defer a.leave()
	var i discordgo.Interaction
	// The error is discordgo's about the Label component; the rest of
	// the interaction (id, token, user, message) is decoded.
	_ = json.Unmarshal(ev.RawData, &i)
	if i.ID == "" || i.Token == "" {
		return
	}
	resp, then := a.planFormSubmit(&i, ev.RawData)
	ctx, cancel := context.WithTimeout(a.ctx, 3*time.Second)
	err := a.s.InteractionRespond(&i, resp, discordgo.WithContext(ctx))
	cancel()
	if err != nil {
		a.log.ErrorContext(a.ctx, "answering a discord form submission", "interaction_id", i.ID, "err", err)
		return
	}
	if then != nil {
		a.goTracked(then)
	}
}
