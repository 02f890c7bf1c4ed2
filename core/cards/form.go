package cards

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Input types: the controls a form can hold. Each platform draws them with
// its own controls (see docs/agents.md, "Forms"); a platform without modal
// windows asks the questions in text (Stamped.WithoutForms).
const (
	InputSelect      = "select"       // one of Options
	InputMultiSelect = "multi_select" // any of Options
	InputDate        = "date"         // a day, YYYY-MM-DD
	InputTime        = "time"         // a time of day, HH:MM (24-hour)
	InputText        = "text"         // free text, one line or several (Multiline)
	InputNumber      = "number"       // a number, whole unless Decimal
)

// InputTypes lists every input type in a stable order.
var InputTypes = []string{InputSelect, InputMultiSelect, InputDate, InputTime, InputText, InputNumber}

// Limits on a form: what both Slack's modals and Discord's hold, so a form
// that validates opens on either.
const (
	MaxInputs         = 5   // Discord: at most 5 components in a modal
	MaxInputNameLen   = 32  // the key of the value
	MaxInputLabelLen  = 45  // Discord: a Label's text
	MaxPlaceholderLen = 100 // Discord: a text input's placeholder
	MaxOptions        = 25  // Discord: a string select's options
	MaxOptionLabelLen = 75  // Slack: an option's text
	MaxOptionValueLen = 100 // Discord: an option's value
	MaxFormTextLen    = 3000
	MaxFormTitleLen   = 45 // Discord's modal title (Slack shows 24 and cuts)
	MaxSubmitLabelLen = 24 // Slack's submit button
)

// Formats of the typed values a form hands back.
const (
	DateFormat = "2006-01-02"
	TimeFormat = "15:04"
)

var inputNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Form is a set of questions behind a card's button: the button opens it in
// a modal window (Slack's views.open, Discord's MODAL response), and what
// the person submits goes back to the agent as one typed JSON object keyed
// by input name, or, for an action of kind tool, into the tool's arguments.
type Form struct {
	Title  string  `json:"title,omitempty" jsonschema:"heading of the form window; the button's label when empty"`
	Submit string  `json:"submit,omitempty" jsonschema:"label of the form's submit button (at most 24 characters); Submit when empty"`
	Inputs []Input `json:"inputs" jsonschema:"the questions, in order; at most 5"`
}

// Input is one question of a form.
type Input struct {
	Name     string `json:"name" jsonschema:"key of the answer in the submitted object: lowercase letters, digits and _, starting with a letter, at most 32 characters, unique in the form"`
	Label    string `json:"label" jsonschema:"the question as people see it, at most 45 characters"`
	Type     string `json:"type" jsonschema:"select, multi_select, date, time, text or number"`
	Required bool   `json:"required,omitempty" jsonschema:"whether an answer is needed to submit"`
	// Placeholder is shown in an empty control.
	Placeholder string `json:"placeholder,omitempty" jsonschema:"hint shown in the empty control, at most 100 characters"`
	// Initial is the answer filled in: a string (an option's value for a
	// select, YYYY-MM-DD, HH:MM, text), a number, or an array of option
	// values for a multi_select.
	Initial json.RawMessage `json:"initial,omitempty" jsonschema:"pre-filled answer: a string (option value, YYYY-MM-DD, HH:MM or text), a number, or an array of option values for multi_select"`
	Options []Option        `json:"options,omitempty" jsonschema:"for select and multi_select: the choices, at most 25"`
	// Multiline makes a text input a paragraph box.
	Multiline bool `json:"multiline,omitempty" jsonschema:"for text: a box of several lines"`
	MinLength int  `json:"min_length,omitempty" jsonschema:"for text: fewest characters"`
	MaxLength int  `json:"max_length,omitempty" jsonschema:"for text: most characters (at most 3000, the default)"`
	// Min and Max bound a number; Decimal allows fractions.
	Min     *float64 `json:"min,omitempty" jsonschema:"for number: smallest allowed"`
	Max     *float64 `json:"max,omitempty" jsonschema:"for number: largest allowed"`
	Decimal bool     `json:"decimal,omitempty" jsonschema:"for number: allow fractions (whole numbers only when false)"`
	// Earliest and Latest bound a date (YYYY-MM-DD, inclusive).
	Earliest string `json:"earliest,omitempty" jsonschema:"for date: first day allowed, YYYY-MM-DD"`
	Latest   string `json:"latest,omitempty" jsonschema:"for date: last day allowed, YYYY-MM-DD"`
}

// Option is one choice of a select.
type Option struct {
	Label string `json:"label" jsonschema:"what people see, at most 75 characters"`
	Value string `json:"value" jsonschema:"what the answer holds, at most 100 characters"`
}

// FormTitle is the heading of the action's form: its title, else the
// button's label.
func (a *Action) FormTitle() string {
	if a.Form != nil && strings.TrimSpace(a.Form.Title) != "" {
		return a.Form.Title
	}
	return a.Label
}

// SubmitLabel is the label of the form's submit button.
func (f *Form) SubmitLabel() string {
	if strings.TrimSpace(f.Submit) != "" {
		return f.Submit
	}
	return "Submit"
}

// MaxTextLength is the most characters a text input takes.
func (in *Input) MaxTextLength() int {
	if in.MaxLength > 0 {
		return in.MaxLength
	}
	return MaxFormTextLen
}

// validateForm checks a form; path names it ("actions[0].form"). reserved
// are argument names the form's answers may not take (a tool action's
// fixed arguments).
func validateForm(p *problems, path string, f *Form, reserved map[string]bool) {
	if Len(f.Title) > MaxFormTitleLen {
		p.add(path+".title", "too long: %d characters, at most %d", Len(f.Title), MaxFormTitleLen)
	}
	if Len(f.Submit) > MaxSubmitLabelLen {
		p.add(path+".submit", "too long: %d characters, at most %d", Len(f.Submit), MaxSubmitLabelLen)
	}
	switch {
	case len(f.Inputs) == 0:
		p.add(path+".inputs", "at least one input is required")
	case len(f.Inputs) > MaxInputs:
		p.add(path+".inputs", "too many: %d, at most %d (what a Discord modal holds)", len(f.Inputs), MaxInputs)
	}
	seen := map[string]int{}
	for i := range f.Inputs {
		in := &f.Inputs[i]
		ip := fmt.Sprintf("%s.inputs[%d]", path, i)
		switch {
		case in.Name == "":
			p.add(ip+".name", "required")
		case len(in.Name) > MaxInputNameLen || !inputNamePattern.MatchString(in.Name):
			p.add(ip+".name", "must be lowercase letters, digits and _, starting with a letter, at most %d characters", MaxInputNameLen)
		default:
			if j, dup := seen[in.Name]; dup {
				p.add(ip+".name", "duplicate of %s.inputs[%d].name %q", path, j, in.Name)
			}
			seen[in.Name] = i
			if reserved[in.Name] {
				p.add(ip+".name", "%q is already one of the tool's args; an answer may not replace it", in.Name)
			}
		}
		switch {
		case strings.TrimSpace(in.Label) == "":
			p.add(ip+".label", "required")
		case Len(in.Label) > MaxInputLabelLen:
			p.add(ip+".label", "too long: %d characters, at most %d", Len(in.Label), MaxInputLabelLen)
		}
		if Len(in.Placeholder) > MaxPlaceholderLen {
			p.add(ip+".placeholder", "too long: %d characters, at most %d", Len(in.Placeholder), MaxPlaceholderLen)
		}
		if !slices.Contains(InputTypes, in.Type) {
			p.add(ip+".type", "must be one of %s", strings.Join(InputTypes, ", "))
			continue
		}
		in.validate(p, ip)
	}
}

// validate checks the settings that belong to the input's type, and that
// no setting of another type is set.
func (in *Input) validate(p *problems, ip string) {
	only := func(field string, set bool, types ...string) {
		if set && !slices.Contains(types, in.Type) {
			p.add(ip+"."+field, "only for inputs of type %s", strings.Join(types, " or "))
		}
	}
	only("options", len(in.Options) > 0, InputSelect, InputMultiSelect)
	only("multiline", in.Multiline, InputText)
	only("min_length", in.MinLength != 0, InputText)
	only("max_length", in.MaxLength != 0, InputText)
	only("min", in.Min != nil, InputNumber)
	only("max", in.Max != nil, InputNumber)
	only("decimal", in.Decimal, InputNumber)
	only("earliest", in.Earliest != "", InputDate)
	only("latest", in.Latest != "", InputDate)
	switch in.Type {
	case InputSelect, InputMultiSelect:
		switch {
		case len(in.Options) == 0:
			p.add(ip+".options", "at least one option is required for a %s", in.Type)
		case len(in.Options) > MaxOptions:
			p.add(ip+".options", "too many: %d, at most %d", len(in.Options), MaxOptions)
		}
		values := map[string]int{}
		for j, o := range in.Options {
			op := fmt.Sprintf("%s.options[%d]", ip, j)
			switch {
			case strings.TrimSpace(o.Label) == "":
				p.add(op+".label", "required")
			case Len(o.Label) > MaxOptionLabelLen:
				p.add(op+".label", "too long: %d characters, at most %d", Len(o.Label), MaxOptionLabelLen)
			}
			switch {
			case o.Value == "":
				p.add(op+".value", "required")
			case Len(o.Value) > MaxOptionValueLen:
				p.add(op+".value", "too long: %d characters, at most %d", Len(o.Value), MaxOptionValueLen)
			default:
				if k, dup := values[o.Value]; dup {
					p.add(op+".value", "duplicate of options[%d].value %q", k, o.Value)
				}
				values[o.Value] = j
			}
		}
	case InputText:
		if in.MinLength < 0 || in.MinLength > MaxFormTextLen {
			p.add(ip+".min_length", "must be between 0 and %d", MaxFormTextLen)
		}
		if in.MaxLength < 0 || in.MaxLength > MaxFormTextLen {
			p.add(ip+".max_length", "must be between 1 and %d", MaxFormTextLen)
		} else if in.MaxLength > 0 && in.MinLength > in.MaxLength {
			p.add(ip+".min_length", "is above max_length (%d)", in.MaxLength)
		}
	case InputDate:
		for _, b := range []struct{ field, v string }{{"earliest", in.Earliest}, {"latest", in.Latest}} {
			if b.v == "" {
				continue
			}
			if d, err := time.Parse(DateFormat, b.v); err != nil || d.Format(DateFormat) != b.v {
				p.add(ip+"."+b.field, "must be a date as YYYY-MM-DD")
			}
		}
		if in.Earliest != "" && in.Latest != "" && in.Earliest > in.Latest {
			p.add(ip+".earliest", "is after latest (%s)", in.Latest)
		}
	case InputNumber:
		const limit = 1e15
		okMin := in.Min == nil || p.finite(ip+".min", *in.Min, limit)
		okMax := in.Max == nil || p.finite(ip+".max", *in.Max, limit)
		if okMin && okMax && in.Min != nil && in.Max != nil && *in.Min > *in.Max {
			p.add(ip+".min", "is above max (%g)", *in.Max)
		}
		if !in.Decimal {
			if in.Min != nil && *in.Min != math.Trunc(*in.Min) {
				p.add(ip+".min", "must be a whole number unless decimal is set")
			}
			if in.Max != nil && *in.Max != math.Trunc(*in.Max) {
				p.add(ip+".max", "must be a whole number unless decimal is set")
			}
		}
	}
	if len(in.Initial) > 0 && string(in.Initial) != "null" {
		raw, err := in.InitialAnswers()
		if err != nil {
			p.add(ip+".initial", "%v", err)
			return
		}
		if _, msg := in.parse(raw); msg != "" {
			p.add(ip+".initial", "%s", msg)
		}
	}
}

// InitialAnswers is the input's initial answer as the strings a platform
// sends back: one, several for a multi_select, none when unset.
func (in *Input) InitialAnswers() ([]string, error) {
	if len(in.Initial) == 0 || string(in.Initial) == "null" {
		return nil, nil
	}
	switch in.Type {
	case InputMultiSelect:
		var vs []string
		if err := json.Unmarshal(in.Initial, &vs); err != nil {
			return nil, fmt.Errorf("must be an array of option values")
		}
		return vs, nil
	case InputNumber:
		var n float64
		if err := json.Unmarshal(in.Initial, &n); err != nil {
			return nil, fmt.Errorf("must be a number")
		}
		return []string{strconv.FormatFloat(n, 'f', -1, 64)}, nil
	default:
		var s string
		if err := json.Unmarshal(in.Initial, &s); err != nil {
			return nil, fmt.Errorf("must be a string")
		}
		return []string{s}, nil
	}
}

// Parse checks what a person submitted against the form and returns the
// typed answers keyed by input name: numbers as JSON numbers, a
// multi_select as an array of option values, a date as YYYY-MM-DD, a time
// as HH:MM, text as written. An optional input left empty is left out.
// raw holds what the platform sent, as strings (several for a
// multi_select); names the form does not have are ignored. problems, when
// not empty, says what is wrong, keyed by input name, in words for the
// person who filled the form in.
func (f *Form) Parse(raw map[string][]string) (answers map[string]any, problems map[string]string) {
	answers = map[string]any{}
	for i := range f.Inputs {
		in := &f.Inputs[i]
		v, msg := in.parse(raw[in.Name])
		if msg != "" {
			if problems == nil {
				problems = map[string]string{}
			}
			problems[in.Name] = msg
			continue
		}
		if v != nil {
			answers[in.Name] = v
		}
	}
	return answers, problems
}

// parse turns one input's raw answer into its typed value (nil when empty
// and allowed to be), or says what is wrong with it.
func (in *Input) parse(raw []string) (any, string) {
	var vals []string
	for _, s := range raw {
		if in.Type != InputText {
			s = strings.TrimSpace(s)
		}
		if strings.TrimSpace(s) != "" {
			vals = append(vals, s)
		}
	}
	if len(vals) == 0 {
		if in.Required {
			return nil, "An answer is required."
		}
		return nil, ""
	}
	if in.Type != InputMultiSelect && len(vals) > 1 {
		return nil, "Give one answer only."
	}
	v := vals[0]
	switch in.Type {
	case InputSelect:
		if !in.hasOption(v) {
			return nil, "Pick one of the choices."
		}
		return v, ""
	case InputMultiSelect:
		out := make([]string, 0, len(vals))
		for _, s := range vals {
			if !in.hasOption(s) {
				return nil, fmt.Sprintf("%q is not one of the choices.", s)
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out, ""
	case InputDate:
		d, err := time.Parse(DateFormat, v)
		if err != nil || d.Format(DateFormat) != v {
			return nil, "Enter a date as YYYY-MM-DD, for example 2026-12-24."
		}
		// Dates as YYYY-MM-DD compare as strings.
		switch {
		case in.Earliest != "" && in.Latest != "" && (v < in.Earliest || v > in.Latest):
			return nil, fmt.Sprintf("Pick a day from %s to %s.", in.Earliest, in.Latest)
		case in.Earliest != "" && v < in.Earliest:
			return nil, fmt.Sprintf("Pick a day on or after %s.", in.Earliest)
		case in.Latest != "" && v > in.Latest:
			return nil, fmt.Sprintf("Pick a day on or before %s.", in.Latest)
		}
		return v, ""
	case InputTime:
		t, err := time.Parse(TimeFormat, v)
		if err != nil || t.Format(TimeFormat) != v {
			return nil, "Enter a time as HH:MM on the 24-hour clock, for example 09:30."
		}
		return v, ""
	case InputNumber:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, "Enter a number."
		}
		if !in.Decimal && n != math.Trunc(n) {
			return nil, "Enter a whole number."
		}
		switch {
		case in.Min != nil && in.Max != nil && (n < *in.Min || n > *in.Max):
			return nil, fmt.Sprintf("Enter a number from %s to %s.", numText(*in.Min), numText(*in.Max))
		case in.Min != nil && n < *in.Min:
			return nil, fmt.Sprintf("Enter a number of at least %s.", numText(*in.Min))
		case in.Max != nil && n > *in.Max:
			return nil, fmt.Sprintf("Enter a number of at most %s.", numText(*in.Max))
		}
		return n, ""
	case InputText:
		n := Len(v)
		if in.MinLength > 0 && n < in.MinLength {
			return nil, fmt.Sprintf("Write at least %d characters (now %d).", in.MinLength, n)
		}
		if max := in.MaxTextLength(); n > max {
			return nil, fmt.Sprintf("Write at most %d characters (now %d).", max, n)
		}
		return v, ""
	}
	return nil, "This question cannot be answered."
}

func (in *Input) hasOption(v string) bool {
	for _, o := range in.Options {
		if o.Value == v {
			return true
		}
	}
	return false
}

// OptionLabel is the label of the option with value v, or v itself.
func (in *Input) OptionLabel(v string) string {
	for _, o := range in.Options {
		if o.Value == v {
			return o.Label
		}
	}
	return v
}

// numText writes a number without a needless fraction (12, 2.5).
func numText(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// MergeArgs lays a form's answers over a tool action's fixed arguments:
// the tool is called with both. Stamp has made sure no answer replaces a
// fixed argument.
func MergeArgs(args json.RawMessage, answers map[string]any) (json.RawMessage, error) {
	m := map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, fmt.Errorf("reading the action's args: %w", err)
		}
	}
	for k, v := range answers {
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("writing the action's args: %w", err)
	}
	return out, nil
}

// argNames lists the keys of a tool action's fixed arguments.
func argNames(args json.RawMessage) map[string]bool {
	var m map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &m) != nil {
		return nil
	}
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// cloneForm copies a form deeply, so a copied card shares nothing.
func cloneForm(f *Form) *Form {
	if f == nil {
		return nil
	}
	c := *f
	c.Inputs = make([]Input, len(f.Inputs))
	for i, in := range f.Inputs {
		in.Initial = slices.Clone(in.Initial)
		in.Options = slices.Clone(in.Options)
		if in.Min != nil {
			v := *in.Min
			in.Min = &v
		}
		if in.Max != nil {
			v := *in.Max
			in.Max = &v
		}
		c.Inputs[i] = in
	}
	return &c
}

// HasForm reports whether any of the card's buttons opens a form.
func (s *Stamped) HasForm() bool {
	for _, a := range s.Actions {
		if a.Form != nil {
			return true
		}
	}
	return false
}
