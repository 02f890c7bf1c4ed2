package cards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Limits on a Result. They keep a stored card to a sane size; they are far
// above what any platform shows, because renderers cut and summarise what
// does not fit rather than reject it.
const (
	MaxItems        = 500
	MaxTextLen      = 20000 // characters in any one text
	MaxURLLen       = 2000
	MaxRows         = 100
	MaxChips        = 50
	MaxCallouts     = 50
	MaxSections     = 100
	MaxChanges      = 10
	MaxSparkValues  = 1000
	MaxActions      = 25 // what one Slack actions block and five Discord rows hold
	MaxActionIDLen  = 32
	MaxArgsBytes    = 16 << 10
	MaxTemplateName = 64
	maxReported     = 10
)

var (
	actionIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	toolPattern     = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	templatePattern = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// FieldError is one problem with one field, named by its JSON path.
type FieldError struct {
	Path string // "items[2].price.currency"
	Msg  string // "must be a 3-letter ISO 4217 code"
}

func (e FieldError) Error() string { return e.Path + ": " + e.Msg }

// ValidationError lists what is wrong with a Result. Its message is written
// for the model that posted it, which gets it back as a tool error.
type ValidationError struct {
	Problems []FieldError
	// More counts problems found beyond those listed.
	More int
}

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Problems)+1)
	for _, p := range e.Problems {
		parts = append(parts, p.Error())
	}
	if e.More > 0 {
		parts = append(parts, fmt.Sprintf("and %d more problems", e.More))
	}
	return "invalid result: " + strings.Join(parts, "; ")
}

type problems struct{ err ValidationError }

func (p *problems) add(path, format string, args ...any) {
	if len(p.err.Problems) >= maxReported {
		p.err.More++
		return
	}
	p.err.Problems = append(p.err.Problems, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (p *problems) result() error {
	if len(p.err.Problems) == 0 {
		return nil
	}
	e := p.err
	return &e
}

func (p *problems) text(path, s string, required bool) {
	switch {
	case required && strings.TrimSpace(s) == "":
		p.add(path, "required")
	case Len(s) > MaxTextLen:
		p.add(path, "too long: %d characters, at most %d", Len(s), MaxTextLen)
	}
}

func (p *problems) url(path, s string) {
	if s == "" {
		return
	}
	if Len(s) > MaxURLLen {
		p.add(path, "too long: %d characters, at most %d", Len(s), MaxURLLen)
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(path, "must be an absolute http or https URL")
	}
}

func (p *problems) finite(path string, v, limit float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		p.add(path, "must be a finite number")
		return false
	}
	if math.Abs(v) > limit {
		p.add(path, "must be between %g and %g", -limit, limit)
		return false
	}
	return true
}

func (p *problems) count(path string, n, max int) {
	if n > max {
		p.add(path, "too many: %d, at most %d", n, max)
	}
}

// Validate checks the result and says, field by field, what is wrong. It
// does not need the template library: an unknown template is not an error
// (it falls back); actions are completed from the template by Stamp, which
// checks them again once merged.
func (r *Result) Validate() error {
	var p problems
	if r.Kind != "" && !slices.Contains(Kinds, r.Kind) {
		p.add("kind", "must be one of %s", strings.Join(Kinds, ", "))
	}
	if r.Template != "" {
		if len(r.Template) > MaxTemplateName || !templatePattern.MatchString(r.Template) {
			p.add("template", "must be a template name: lowercase letters, digits and _, at most %d", MaxTemplateName)
		}
	}
	p.text("title", r.Title, false)
	p.text("summary", r.Summary, false)
	switch {
	case len(r.Items) == 0:
		p.add("items", "at least one item is required")
	case len(r.Items) > MaxItems:
		p.count("items", len(r.Items), MaxItems)
	}
	for i := range r.Items {
		if len(r.Items) > MaxItems {
			break
		}
		r.Items[i].validate(&p, fmt.Sprintf("items[%d]", i))
	}
	validateActions(&p, r.Actions, false)
	return p.result()
}

func (it *Item) validate(p *problems, path string) {
	p.text(path+".title", it.Title, true)
	p.text(path+".subtitle", it.Subtitle, false)
	p.url(path+".link", it.Link)
	p.url(path+".image", it.Image)
	p.text(path+".image_alt", it.ImageAlt, false)
	if pr := it.Price; pr != nil {
		p.finite(path+".price.amount", pr.Amount, 1e15)
		if !currencyPattern.MatchString(pr.Currency) {
			p.add(path+".price.currency", "must be a 3-letter ISO 4217 code in capitals, e.g. USD, EUR")
		}
		p.text(path+".price.unit", pr.Unit, false)
	}
	if rt := it.Rating; rt != nil {
		max := rt.Max
		if max == 0 {
			max = 5
		}
		if p.finite(path+".rating.max", max, 100) && max < 0 {
			p.add(path+".rating.max", "must be positive")
		}
		if p.finite(path+".rating.value", rt.Value, 100) && (rt.Value < 0 || rt.Value > max) {
			p.add(path+".rating.value", "must be between 0 and max (%g)", max)
		}
		if rt.Count < 0 {
			p.add(path+".rating.count", "must not be negative")
		}
	}
	p.count(path+".rows", len(it.Rows), MaxRows)
	for j, row := range it.Rows {
		rp := fmt.Sprintf("%s.rows[%d]", path, j)
		p.text(rp+".label", row.Label, true)
		p.text(rp+".value", row.Value, true)
	}
	p.count(path+".chips", len(it.Chips), MaxChips)
	for j, c := range it.Chips {
		p.text(fmt.Sprintf("%s.chips[%d]", path, j), c, true)
	}
	p.count(path+".callouts", len(it.Callouts), MaxCallouts)
	for j, c := range it.Callouts {
		cp := fmt.Sprintf("%s.callouts[%d]", path, j)
		switch c.Level {
		case LevelInfo, LevelSuccess, LevelWarning, LevelError:
		default:
			p.add(cp+".level", "must be info, success, warning or error")
		}
		p.text(cp+".title", c.Title, false)
		p.text(cp+".text", c.Text, true)
	}
	p.count(path+".sections", len(it.Sections), MaxSections)
	for j, s := range it.Sections {
		sp := fmt.Sprintf("%s.sections[%d]", path, j)
		p.text(sp+".title", s.Title, false)
		p.text(sp+".text", s.Text, true)
	}
	p.count(path+".changes", len(it.Changes), MaxChanges)
	for j, c := range it.Changes {
		cp := fmt.Sprintf("%s.changes[%d]", path, j)
		switch c.Direction {
		case DirectionUp, DirectionDown, DirectionFlat:
		default:
			p.add(cp+".direction", "must be up, down or flat")
		}
		if p.finite(cp+".percent", c.Percent, 1e6) && c.Direction == DirectionUp && c.Percent < 0 {
			p.add(cp+".percent", "is negative but direction is up")
		}
		p.text(cp+".label", c.Label, false)
	}
	if sp := it.Sparkline; sp != nil {
		switch {
		case len(sp.Values) < 2:
			p.add(path+".sparkline.values", "at least two values are required")
		case len(sp.Values) > MaxSparkValues:
			p.count(path+".sparkline.values", len(sp.Values), MaxSparkValues)
		default:
			for j, v := range sp.Values {
				if !p.finite(fmt.Sprintf("%s.sparkline.values[%d]", path, j), v, math.MaxFloat64) {
					break
				}
			}
		}
		p.text(path+".sparkline.label", sp.Label, false)
	}
}

// validateActions checks actions; complete is set once the template's
// declarations are merged in, when every field must be present.
func validateActions(p *problems, actions []Action, complete bool) {
	p.count("actions", len(actions), MaxActions)
	seen := make(map[string]int, len(actions))
	for i, a := range actions {
		ap := fmt.Sprintf("actions[%d]", i)
		switch {
		case a.ID == "":
			p.add(ap+".id", "required")
		case len(a.ID) > MaxActionIDLen || !actionIDPattern.MatchString(a.ID):
			p.add(ap+".id", "must be lowercase letters, digits, _ or -, at most %d characters", MaxActionIDLen)
		default:
			if j, dup := seen[a.ID]; dup {
				p.add(ap+".id", "duplicate of actions[%d].id %q", j, a.ID)
			}
			seen[a.ID] = i
		}
		if complete {
			p.text(ap+".label", a.Label, true)
		} else {
			p.text(ap+".label", a.Label, false)
		}
		switch a.Style {
		case StyleDefault, StylePrimary, StyleDanger:
		default:
			p.add(ap+".style", "must be primary, danger or empty")
		}
		switch a.Kind {
		case ActionTool:
			if complete && a.Tool == "" {
				p.add(ap+".tool", "required for an action of kind tool")
			}
		case ActionSignal:
			if a.Tool != "" {
				p.add(ap+".tool", "must be empty for an action of kind signal")
			}
			if len(a.Args) > 0 {
				p.add(ap+".args", "must be empty for an action of kind signal")
			}
		case "":
			if complete {
				p.add(ap+".kind", "required: tool or signal (the template declares no action %q)", a.ID)
			}
		default:
			p.add(ap+".kind", "must be tool or signal")
		}
		if a.Tool != "" && !toolPattern.MatchString(a.Tool) {
			p.add(ap+".tool", "must be a tool name: letters, digits, _ . or -, at most 64 characters")
		}
		if len(a.Args) > 0 {
			trimmed := bytes.TrimSpace(a.Args)
			switch {
			// Only what the model wrote is capped: arguments a template
			// builds from the card (an email's body) are as long as the card.
			case !complete && len(a.Args) > MaxArgsBytes:
				p.add(ap+".args", "too large: %d bytes, at most %d", len(a.Args), MaxArgsBytes)
			case !json.Valid(trimmed):
				p.add(ap+".args", "must be valid JSON")
			case !bytes.HasPrefix(trimmed, []byte("{")) && !bytes.Equal(trimmed, []byte("null")):
				p.add(ap+".args", "must be a JSON object")
			}
		}
		if a.Form != nil {
			validateForm(p, ap+".form", a.Form, argNames(a.Args))
		}
	}
}
