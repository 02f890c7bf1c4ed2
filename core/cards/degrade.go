package cards

import (
	"fmt"
	"strings"
)

// WithoutForms returns the card as a platform without modal windows shows
// it (the web console, the terminal, chat platforms with no forms): each
// button that opens a form is taken away, and its questions are asked in
// text under the summary, where every renderer shows them, with what each
// answer should look like. The person answers in a message of their own,
// which reaches the agent like any other. A card without forms comes back
// as it is.
//
// Adapters do not call it themselves: deliver does it for every adapter
// that lacks bots.FormOpener.
func (s *Stamped) WithoutForms() *Stamped {
	if !s.HasForm() {
		return s
	}
	c := s.WithOutcome(s.Outcome)
	kept := c.Actions[:0]
	var prompts []string
	for i := range c.Actions {
		a := &c.Actions[i]
		if a.Form == nil {
			kept = append(kept, *a)
			continue
		}
		prompts = append(prompts, FormPrompt(a))
	}
	c.Actions = kept
	if len(c.Actions) == 0 {
		c.Actions = nil
	}
	if s.Outcome == "" {
		// Once the card is settled, its questions are answered.
		parts := append([]string{}, prompts...)
		if strings.TrimSpace(c.Summary) != "" {
			parts = append([]string{c.Summary}, parts...)
		}
		c.Summary = strings.Join(parts, "\n\n")
	}
	return c
}

// FormPrompt asks an action's form in text: a heading, then one numbered
// line per question saying what kind of answer it takes.
//
//	📝 Book a table: reply with your answers.
//	1. Day (a date, YYYY-MM-DD; required)
//	2. Seating (one of: Inside, Terrace)
func FormPrompt(a *Action) string {
	var b strings.Builder
	fmt.Fprintf(&b, "📝 %s: reply with your answers.", strings.TrimSpace(a.FormTitle()))
	if a.Form == nil {
		return b.String()
	}
	for i := range a.Form.Inputs {
		in := &a.Form.Inputs[i]
		fmt.Fprintf(&b, "\n%d. %s (%s)", i+1, in.Label, strings.Join(in.hints(), "; "))
	}
	return b.String()
}

// hints say what an answer to the input looks like, for a text prompt.
func (in *Input) hints() []string {
	var h []string
	labels := func() string {
		ls := make([]string, len(in.Options))
		for i, o := range in.Options {
			ls[i] = o.Label
		}
		return strings.Join(ls, ", ")
	}
	switch in.Type {
	case InputSelect:
		h = append(h, "one of: "+labels())
	case InputMultiSelect:
		h = append(h, "any of: "+labels())
	case InputDate:
		what := "a date, YYYY-MM-DD"
		switch {
		case in.Earliest != "" && in.Latest != "":
			what += ", from " + in.Earliest + " to " + in.Latest
		case in.Earliest != "":
			what += ", on or after " + in.Earliest
		case in.Latest != "":
			what += ", on or before " + in.Latest
		}
		h = append(h, what)
	case InputTime:
		h = append(h, "a time, HH:MM")
	case InputNumber:
		what := "a whole number"
		if in.Decimal {
			what = "a number"
		}
		switch {
		case in.Min != nil && in.Max != nil:
			what += fmt.Sprintf(" from %s to %s", numText(*in.Min), numText(*in.Max))
		case in.Min != nil:
			what += " of at least " + numText(*in.Min)
		case in.Max != nil:
			what += " of at most " + numText(*in.Max)
		}
		h = append(h, what)
	case InputText:
		what := "text"
		if in.MaxLength > 0 {
			what += fmt.Sprintf(", at most %d characters", in.MaxLength)
		}
		h = append(h, what)
	}
	if in.Required {
		h = append(h, "required")
	}
	if vals, err := in.InitialAnswers(); err == nil && len(vals) > 0 {
		shown := make([]string, len(vals))
		for i, v := range vals {
			shown[i] = in.OptionLabel(v)
		}
		h = append(h, "default: "+strings.Join(shown, ", "))
	}
	return h
}
