package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// RawHandler runs one call of a tool whose schema was declared rather than
// generated (a tool of an MCP server): it receives the model's arguments,
// validated against that schema, as JSON. Its error goes back to the model
// as an error result, as a Handler's does.
type RawHandler func(ctx context.Context, req *Request, args json.RawMessage) (any, error)

// NewRaw builds a tool from a declared input schema (a JSON object schema)
// instead of a Go type: the schema is what the model sees, byte for byte,
// and what validates the arguments before h runs. A schema the validator
// cannot compile (a keyword from a draft it does not know) is still offered
// as declared; the arguments are then only checked to be an object, and the
// far side validates them.
func NewRaw(d Def, schema json.RawMessage, h RawHandler) (*Tool, error) {
	if h == nil {
		return nil, fmt.Errorf("building tool %q: handler is nil", d.Name)
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("building tool %q: %w", d.Name, err)
	}
	if d.Tier == "" {
		d.Tier = TierServer
	}
	if d.MaxOutputBytes == 0 {
		d.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("building tool %q: decoding input schema: %w", d.Name, err)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("building tool %q: input schema type %q, want \"object\"", d.Name, s.Type)
	}
	// The model is shown the schema as declared, with "properties" always
	// present (OpenAI rejects an object schema without it).
	var shown map[string]any
	if err := json.Unmarshal(schema, &shown); err != nil {
		return nil, fmt.Errorf("building tool %q: decoding input schema: %w", d.Name, err)
	}
	if _, ok := shown["properties"]; !ok {
		shown["properties"] = map[string]any{}
	}
	raw, err := json.Marshal(shown)
	if err != nil {
		return nil, fmt.Errorf("building tool %q: encoding input schema: %w", d.Name, err)
	}
	// $schema and $id name drafts and locations the validator may not
	// fetch; the keywords below them are what validates.
	s.Schema, s.ID = "", ""
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		resolved, err = (&jsonschema.Schema{Type: "object"}).Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("building tool %q: resolving input schema: %w", d.Name, err)
		}
	}
	return &Tool{
		def:      d,
		schema:   raw,
		resolved: resolved,
		run: func(ctx context.Context, req *Request, args json.RawMessage) (any, error) {
			return h(ctx, req, args)
		},
	}, nil
}

// Remove takes tools out of the registry by name; names it does not hold
// are ignored. A withdrawn tool is no longer offered, and a pending call of
// it resolves as an unknown tool until it is added again.
func (r *Registry) Remove(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		delete(r.tools, n)
	}
}

// Replace swaps the tools named old for the tools in add, at once: a turn
// listing the registry sees either the old set or the new one. A name in
// add that another tool (not in old) holds is an error wrapping
// ErrDuplicate, and nothing changes.
func (r *Registry) Replace(old []string, add []*Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range add {
		if t == nil {
			return errors.New("replacing tools: tool is nil")
		}
		if _, ok := r.tools[t.Name()]; ok && !slices.Contains(old, t.Name()) {
			return fmt.Errorf("registering tool %q: %w", t.Name(), ErrDuplicate)
		}
	}
	for _, n := range old {
		delete(r.tools, n)
	}
	for _, t := range add {
		r.tools[t.Name()] = t
	}
	return nil
}

// Audience limits who is offered a tool. The zero Audience is everyone.
type Audience struct {
	// Agents, when set, are the only agents offered the tool.
	Agents []string
	// Workspaces, when set, are the only workspaces whose conversations
	// are offered the tool: a platform workspace id (a Slack team, a
	// Discord guild) or a Switchboard workspace id.
	Workspaces []string
}

// Allows reports whether an agent's conversation in workspace (its
// platform id, "" for none) or workspaceID (its Switchboard id, "" for
// none) is offered the tool.
func (a Audience) Allows(agent, workspace, workspaceID string) bool {
	if len(a.Agents) > 0 && !slices.Contains(a.Agents, agent) {
		return false
	}
	if len(a.Workspaces) > 0 && !slices.ContainsFunc(a.Workspaces, func(w string) bool {
		return w != "" && (w == workspace || w == workspaceID)
	}) {
		return false
	}
	return true
}

// Audience is who the tool is offered to.
func (t *Tool) Audience() Audience { return t.def.Audience }
