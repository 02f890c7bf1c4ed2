package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Plan is a goal broken into steps, as a lead agent writes it:
//
//	{"goal": "…", "steps": [
//	  {"id": "research", "title": "Find the three options", "agent": "scout"},
//	  {"id": "write", "title": "Write it up", "role": "writer",
//	   "inputs": {"tone": "short"}, "depends_on": ["research"]}]}
type Plan struct {
	Goal  string `json:"goal,omitempty" jsonschema:"what the whole plan achieves"`
	Steps []Step `json:"steps" jsonschema:"the steps, each handed to one agent; a step runs once the steps it depends on are done"`
	// Check, when set, is this run's completion check in place of the
	// lead's run_check (a coding step's gates).
	Check *Check `json:"check,omitempty" jsonschema:"optional: the run's check; a command whose exit status decides, and/or a judge agent that answers PASS or FAIL (for coding steps: run in each step's worktree, the judge reviews its diff)"`
}

// Check is a plan's completion check.
type Check struct {
	Command string `json:"command,omitempty" jsonschema:"a shell command; exit status 0 passes"`
	Judge   string `json:"judge,omitempty" jsonschema:"an agent that reads the result (a diff) and answers PASS or FAIL"`
	// Timeout is a Go duration ("10m").
	Timeout string `json:"timeout,omitempty" jsonschema:"how long the check may take, such as 10m"`
}

// Step is one step of a plan.
type Step struct {
	// ID names the step for depends_on: lowercase letters, digits, - and _.
	ID    string `json:"id" jsonschema:"a short id other steps name in depends_on (letters, digits, - and _)"`
	Title string `json:"title" jsonschema:"what the step does, said to the agent that does it"`
	// Agent names the agent, or Role a role (specialist or generalist) or
	// a domain an agent declares; one of the two.
	Agent string `json:"agent,omitempty" jsonschema:"the agent that does the step"`
	Role  string `json:"role,omitempty" jsonschema:"instead of agent: a role or domain; the first agent declaring it does the step"`
	// Inputs are named values handed to the agent with the title.
	Inputs    map[string]string `json:"inputs,omitempty" jsonschema:"named inputs for the step"`
	DependsOn []string          `json:"depends_on,omitempty" jsonschema:"ids of the steps whose output this step needs"`
}

// Roster is who may do steps: agent names and, per role or domain, the
// agents declaring it (in declaration order).
type Roster struct {
	// Lead is the agent whose plan it is (it may judge its own run).
	Lead   string
	Agents []string
	Roles  map[string][]string
}

// Resolve returns the agent a step goes to: its agent, else the first
// agent of its role.
func (r Roster) Resolve(s Step) string {
	if s.Agent != "" {
		return strings.TrimPrefix(s.Agent, "@")
	}
	if as := r.Roles[strings.ToLower(s.Role)]; len(as) > 0 {
		return as[0]
	}
	return ""
}

// FieldError is one validation error, naming the field with a path such
// as steps[2].depends_on[0].
type FieldError struct {
	Field   string
	Message string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// Errors are a plan's validation errors.
type Errors []FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return "invalid plan: " + strings.Join(parts, "; ")
}

// MaxSteps bounds a plan.
const MaxSteps = 50

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Decode reads raw strictly: unknown fields and trailing data are errors.
func Decode(raw json.RawMessage) (*Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, Errors{{Field: "plan", Message: "does not match the schema: " + err.Error()}}
	}
	if dec.More() {
		return nil, Errors{{Field: "plan", Message: "has data after the object"}}
	}
	return &p, nil
}

// Validate checks p against the schema and the roster: at least one step,
// each with a well-formed unique id, a title, exactly one of agent and
// role naming someone in the roster, and dependencies on other existing
// steps without cycles. It returns every error found (nil when none).
func Validate(p *Plan, r Roster) Errors {
	var errs Errors
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if p == nil || len(p.Steps) == 0 {
		add("steps", "the plan has no steps")
		return errs
	}
	if len(p.Steps) > MaxSteps {
		add("steps", "%d steps; at most %d", len(p.Steps), MaxSteps)
	}
	index := map[string]int{}
	for i, s := range p.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		switch {
		case s.ID == "":
			add(f+".id", "is required")
		case !idPattern.MatchString(s.ID):
			add(f+".id", "%q must be letters, digits, - and _ (at most 64)", s.ID)
		default:
			if j, dup := index[s.ID]; dup {
				add(f+".id", "duplicate id %q (also steps[%d])", s.ID, j)
			} else {
				index[s.ID] = i
			}
		}
		if strings.TrimSpace(s.Title) == "" {
			add(f+".title", "is required")
		}
		switch {
		case s.Agent == "" && s.Role == "":
			add(f+".agent", "one of agent or role is required")
		case s.Agent != "" && s.Role != "":
			add(f+".agent", "give agent or role, not both")
		case s.Agent != "":
			if name := strings.TrimPrefix(s.Agent, "@"); !slices.Contains(r.Agents, name) {
				add(f+".agent", "no agent named %q (agents: %s)", name, strings.Join(r.Agents, ", "))
			}
		default:
			if len(r.Roles[strings.ToLower(s.Role)]) == 0 {
				add(f+".role", "no agent has role or domain %q", s.Role)
			}
		}
	}
	for i, s := range p.Steps {
		seen := map[string]bool{}
		for k, d := range s.DependsOn {
			f := fmt.Sprintf("steps[%d].depends_on[%d]", i, k)
			switch _, ok := index[d]; {
			case d == s.ID:
				add(f, "step %q depends on itself", d)
			case !ok:
				add(f, "no step with id %q", d)
			case seen[d]:
				add(f, "%q is listed twice", d)
			}
			seen[d] = true
		}
	}
	if c := p.Check; c != nil {
		if c.Command == "" && c.Judge == "" {
			add("check", "give command, judge or both")
		}
		if c.Judge != "" && !slices.Contains(r.Agents, strings.TrimPrefix(c.Judge, "@")) && strings.TrimPrefix(c.Judge, "@") != r.Lead {
			add("check.judge", "no agent named %q", c.Judge)
		}
		if c.Timeout != "" {
			if d, err := time.ParseDuration(c.Timeout); err != nil || d <= 0 {
				add("check.timeout", "%q is not a positive duration such as 10m", c.Timeout)
			}
		}
	}
	if cycle := findCycle(p.Steps, index); cycle != nil {
		add(fmt.Sprintf("steps[%d].depends_on", index[cycle[0]]), "cycle: %s", strings.Join(cycle, " → "))
	}
	return errs
}

// findCycle returns the ids of a dependency cycle, first id repeated at
// the end, or nil. Self-dependencies are reported apart.
func findCycle(steps []Step, index map[string]int) []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(steps))
	var path []string
	var visit func(i int) []string
	visit = func(i int) []string {
		color[i] = grey
		path = append(path, steps[i].ID)
		for _, d := range steps[i].DependsOn {
			j, ok := index[d]
			if !ok || j == i {
				continue
			}
			switch color[j] {
			case grey:
				start := slices.Index(path, d)
				return append(slices.Clone(path[start:]), d)
			case white:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		color[i] = black
		return nil
	}
	for i := range steps {
		if _, ok := index[steps[i].ID]; ok && color[i] == white && index[steps[i].ID] == i {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// Parse scans text for a plan, decodes it strictly and validates it.
func Parse(text string, r Roster) (*Plan, error) {
	raw, err := Scan(text)
	if err != nil {
		return nil, Errors{{Field: "plan", Message: "no plan found: write the plan as one JSON object with a steps list"}}
	}
	p, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	if errs := Validate(p, r); errs != nil {
		return nil, errs
	}
	return p, nil
}

// ReviseFunc asks the model again, telling it what was wrong with its
// plan; it returns the model's new answer.
type ReviseFunc func(ctx context.Context, problems string) (string, error)

// Extract parses a plan out of text; when that fails and revise is set,
// the errors go back to the model once and its new answer is parsed. The
// error of a plan that fails twice is the second one's; revised reports
// whether the model was asked again.
func Extract(ctx context.Context, text string, r Roster, revise ReviseFunc) (p *Plan, revised bool, err error) {
	p, err = Parse(text, r)
	if err == nil || revise == nil {
		return p, false, err
	}
	var errs Errors
	if !errors.As(err, &errs) {
		return nil, false, err
	}
	answer, rerr := revise(ctx, Feedback(errs))
	if rerr != nil {
		return nil, true, fmt.Errorf("asking for a corrected plan: %w", rerr)
	}
	p, err = Parse(answer, r)
	return p, true, err
}

// Feedback is what a model is told about its invalid plan.
func Feedback(errs Errors) string {
	var b strings.Builder
	b.WriteString("Your plan is not valid. Fix these problems and answer with the whole corrected plan as one JSON object:\n")
	for _, e := range errs {
		fmt.Fprintf(&b, "- %s\n", e.Error())
	}
	return b.String()
}
