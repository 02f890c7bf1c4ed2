package tool

import (
	"errors"
	"fmt"
	"slices"
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
	Default map[Risk]Decision   `json:"default,omitempty" yaml:"default,omitempty"`
	Tools   map[string]Decision `json:"tools,omitempty" yaml:"tools,omitempty"`
	Deny    []string            `json:"deny,omitempty" yaml:"deny,omitempty"`
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

// Validate reports the first malformed field, naming it. Config loading
// calls it so that a typo fails at start-up instead of silently asking
// for confirmation on every call.
func (p Policy) Validate() error {
	var errs []error
	for _, r := range sortedKeys(p.Default) {
		d := p.Default[r]
		if !r.valid() {
			errs = append(errs, fmt.Errorf("Policy.Default: risk %q must be one of low, medium, high", r))
		}
		if !d.valid() {
			errs = append(errs, fmt.Errorf("Policy.Default[%s]: decision %q must be one of auto, notify, confirm, deny", r, d))
		}
	}
	for _, name := range sortedKeys(p.Tools) {
		d := p.Tools[name]
		if !namePattern.MatchString(name) {
			errs = append(errs, fmt.Errorf("Policy.Tools: tool name %q must match %s", name, namePattern))
		}
		if !d.valid() {
			errs = append(errs, fmt.Errorf("Policy.Tools[%s]: decision %q must be one of auto, notify, confirm, deny", name, d))
		}
	}
	for i, entry := range p.Deny {
		ctx, name, scoped := strings.Cut(entry, ":")
		switch {
		case !scoped && !namePattern.MatchString(entry):
			errs = append(errs, fmt.Errorf("Policy.Deny[%d]: %q must be a tool name, context:tool or context:*", i, entry))
		case scoped && ctx == "":
			errs = append(errs, fmt.Errorf("Policy.Deny[%d]: %q has an empty context before ':'", i, entry))
		case scoped && name != "*" && !namePattern.MatchString(name):
			errs = append(errs, fmt.Errorf("Policy.Deny[%d]: %q must name a tool or * after ':'", i, entry))
		}
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
