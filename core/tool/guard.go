package tool

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Decision is what the guard says about one call.
type Decision string

const (
	DecisionAuto    Decision = "auto"    // run
	DecisionNotify  Decision = "notify"  // run, and tell the conversation it ran
	DecisionConfirm Decision = "confirm" // persist an approval request and pause until a person decides
	DecisionDeny    Decision = "deny"    // do not run; the model gets an error result
)

func (d Decision) valid() bool {
	return d == DecisionAuto || d == DecisionNotify || d == DecisionConfirm || d == DecisionDeny
}

// defaultDecisions apply to risks the policy does not map.
var defaultDecisions = map[Risk]Decision{
	RiskLow:    DecisionAuto,
	RiskMedium: DecisionNotify,
	RiskHigh:   DecisionConfirm,
}

// Policy decides whether a tool call may run. The zero Policy is usable:
// low risk runs, medium runs and notifies, high asks for confirmation.
//
// Precedence, first match wins:
//  1. Deny: an entry "tool" denies the tool everywhere, "context:tool" only
//     in that context (web, slack, discord, terminal, scheduler, api), and
//     "context:*" every tool in that context.
//  2. Tools: a per-tool decision, which may be looser or stricter than the
//     tool's risk implies (an operator's deliberate choice).
//  3. Default: the decision for the tool's declared risk.
//  4. The built-in default for the risk.
//
// A risk the policy does not know (an empty or misspelt declaration) gets
// confirm: a person decides rather than nobody.
type Policy struct {
	// Default is the decision for each risk a tool declares; a risk left
	// out keeps the built-in one: low runs, medium runs and notifies, high
	// asks for confirmation.
	Default map[Risk]Decision `json:"default,omitempty" yaml:"default,omitempty"`
	// Tools is the decision for a tool by its name, looser or stricter
	// than its risk implies.
	Tools map[string]Decision `json:"tools,omitempty" yaml:"tools,omitempty"`
	// Deny lists tools that never run: "tool" everywhere, "context:tool"
	// in one context (web, slack, discord, terminal, scheduler, api) and
	// "context:*" every tool there.
	Deny []string `json:"deny,omitempty" yaml:"deny,omitempty"`
}

// Decide returns the decision for a call of toolName, declared at risk, in
// the context ctxName. It is pure: the engine persists approvals and audit
// rows from its answer.
func (p Policy) Decide(toolName string, risk Risk, ctxName ContextName) Decision {
	for _, entry := range p.Deny {
		if denies(entry, toolName, ctxName) {
			return DecisionDeny
		}
	}
	if d, ok := p.Tools[toolName]; ok {
		return orConfirm(d)
	}
	if d, ok := p.Default[risk]; ok {
		return orConfirm(d)
	}
	if d, ok := defaultDecisions[risk]; ok {
		return d
	}
	return DecisionConfirm
}

// orConfirm guards against a policy that skipped Validate: a decision it
// cannot read falls back to asking a person.
func orConfirm(d Decision) Decision {
	if d.valid() {
		return d
	}
	return DecisionConfirm
}

func denies(entry, toolName string, ctxName ContextName) bool {
	ctx, name, scoped := strings.Cut(entry, ":")
	if !scoped {
		return entry == toolName
	}
	return ContextName(ctx) == ctxName && (name == "*" || name == toolName)
}

// Validate reports every malformed field, naming it as switchboard.yaml
// does ("policy.deny[1]"). Config loading calls it so that a typo fails at
// start-up instead of silently asking for confirmation on every call.
func (p Policy) Validate() error { return p.ValidateAt("policy") }

// ValidateAt is Validate with the errors naming the policy at field (for
// example "agents[0].policy" or "workspaces.T0123.policy").
func (p Policy) ValidateAt(field string) error {
	var errs []error
	for _, r := range sortedKeys(p.Default) {
		d := p.Default[r]
		if !r.valid() {
			errs = append(errs, fmt.Errorf("%s.default: risk %q must be one of low, medium, high", field, r))
		}
		if !d.valid() {
			errs = append(errs, fmt.Errorf("%s.default[%s]: decision %q must be one of auto, notify, confirm, deny", field, r, d))
		}
	}
	for _, name := range sortedKeys(p.Tools) {
		d := p.Tools[name]
		if !namePattern.MatchString(name) {
			errs = append(errs, fmt.Errorf("%s.tools: tool name %q must match %s", field, name, namePattern))
		}
		if !d.valid() {
			errs = append(errs, fmt.Errorf("%s.tools[%s]: decision %q must be one of auto, notify, confirm, deny", field, name, d))
		}
	}
	for i, entry := range p.Deny {
		ctx, name, scoped := strings.Cut(entry, ":")
		switch {
		case !scoped && !namePattern.MatchString(entry):
			errs = append(errs, fmt.Errorf("%s.deny[%d]: %q must be a tool name, context:tool or context:*", field, i, entry))
		case scoped && ctx == "":
			errs = append(errs, fmt.Errorf("%s.deny[%d]: %q has an empty context before ':'", field, i, entry))
		case scoped && !slices.Contains(Contexts(), ContextName(ctx)):
			errs = append(errs, fmt.Errorf("%s.deny[%d]: %q names the unknown context %q (known: %s)", field, i, entry, ctx, contextList()))
		case scoped && name != "*" && !namePattern.MatchString(name):
			errs = append(errs, fmt.Errorf("%s.deny[%d]: %q must name a tool or * after ':'", field, i, entry))
		}
	}
	return errors.Join(errs...)
}

func contextList() string {
	names := make([]string, 0, len(Contexts()))
	for _, c := range Contexts() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// Layer stacks policies, least specific first (platform, workspace, agent),
// into the one the guard applies:
//   - default: per risk, the most specific level that sets a decision for
//     that risk wins;
//   - tools: per tool, the most specific level that sets a decision for that
//     tool wins;
//   - deny: entries add up; a deny at any level holds, and no level can lift
//     another's.
//
// Decide's order then applies to the result: a deny, then a per-tool
// decision (from whichever level), then the decision for the risk.
func Layer(levels ...Policy) Policy {
	var out Policy
	for _, l := range levels {
		for r, d := range l.Default {
			if out.Default == nil {
				out.Default = map[Risk]Decision{}
			}
			out.Default[r] = d
		}
		for name, d := range l.Tools {
			if out.Tools == nil {
				out.Tools = map[string]Decision{}
			}
			out.Tools[name] = d
		}
		for _, e := range l.Deny {
			if !slices.Contains(out.Deny, e) {
				out.Deny = append(out.Deny, e)
			}
		}
	}
	return out
}

// Policies are the guard's three levels: the platform's (switchboard.yaml's
// top-level policy), each workspace's (by the platform's workspace id, a
// Slack team or a Discord guild) and each agent's.
type Policies struct {
	Platform   Policy
	Workspaces map[string]Policy
	Agents     map[string]Policy
}

// For is the policy of agent's calls in workspace: the three levels layered
// (see Layer).
func (ps Policies) For(agent, workspace string) Policy {
	return Layer(ps.Platform, ps.Workspaces[workspace], ps.Agents[agent])
}

// Validate checks every level, naming each as switchboard.yaml does.
func (ps Policies) Validate() error {
	errs := []error{ps.Platform.ValidateAt("policy")}
	for _, ws := range sortedKeys(ps.Workspaces) {
		errs = append(errs, ps.Workspaces[ws].ValidateAt("workspaces."+ws+".policy"))
	}
	for _, a := range sortedKeys(ps.Agents) {
		errs = append(errs, ps.Agents[a].ValidateAt("agent "+strconv.Quote(a)+" policy"))
	}
	return errors.Join(errs...)
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
