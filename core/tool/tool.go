// Package tool is the typed tool registry: a tool is a Go handler
// func(ctx, *Request, In) (Out, error) whose input JSON Schema is generated
// from In. The Request says on whose behalf the call runs (the
// conversation, the agent, the person, the context), passed explicitly
// rather than hidden in ctx.
// That one schema is both what the model is told and what validates the
// model's arguments before the handler runs, so the two cannot drift apart.
//
// A call never crashes a turn: bad arguments, handler errors and panics all
// become error results the model sees and can react to. A handler pauses its
// call (a question for a person, work for a frontend client) by returning
// PauseWith(...) as its error, and returns files for the platform through
// the Attacher interface on its output.
//
// The guard (Policy.Decide) is the pure decision of whether a call may run;
// the engine persists approvals and audit rows.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Risk is the declared risk of running a tool; the guard maps it to a
// decision.
type Risk string

const (
	RiskLow    Risk = "low"    // reads, or changes nothing outside the conversation
	RiskMedium Risk = "medium" // changes something that is easy to undo
	RiskHigh   Risk = "high"   // sends, spends, deletes: hard to undo
)

func (r Risk) valid() bool {
	return r == RiskLow || r == RiskMedium || r == RiskHigh
}

// Tier says where a tool runs.
type Tier string

const (
	// TierServer tools run in the engine.
	TierServer Tier = "server"
	// TierFrontend tools need a live client (a web page, an SDK client);
	// headless contexts swap them for a server equivalent or drop them.
	TierFrontend Tier = "frontend"
)

func (t Tier) valid() bool {
	return t == TierServer || t == TierFrontend
}

// maxNameLen is the longest tool name the model providers accept.
const maxNameLen = 64

// namePattern is what the providers accept as a tool (function) name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// DefaultMaxOutputBytes bounds a tool's JSON output, so one tool cannot
// flood the model's context window.
const DefaultMaxOutputBytes = 128 << 10

// Def declares a tool.
type Def struct {
	// Name is what the model calls; ^[a-zA-Z0-9_-]{1,64}$. It must stay the
	// same across versions and contexts: a resumed conversation finds its
	// pending calls by name.
	Name string
	// Description tells the model when and how to use the tool. Required.
	Description string
	// Risk is required: it decides whether a person must confirm the call.
	Risk Risk
	// Tier defaults to TierServer.
	Tier Tier
	// SchemaFunc, if set, receives the schema inferred from In before it is
	// resolved, to add what Go types cannot say: enums, bounds, patterns,
	// defaults. It must not change the schema's shape (property names and
	// types), which In decodes.
	SchemaFunc func(s *jsonschema.Schema) error
	// MaxOutputBytes bounds the encoded output; a larger output becomes an
	// error result. Zero means DefaultMaxOutputBytes.
	MaxOutputBytes int
	// Audience limits which agents and workspaces are offered the tool;
	// the zero value is everyone.
	Audience Audience
	// ReadOnly declares that a call changes nothing anywhere: it only reads
	// (a list of pull requests, a mail search). Such a tool can be called
	// again freely, so it may serve as an input (a pulse watching it).
	ReadOnly bool
	// OptIn tools (the web, the sandbox, the browser: tools that reach
	// outside or run code) are offered only to agents whose tools list
	// names them; an agent without a list is not offered them.
	OptIn bool
}

// Tool is a registered tool. It is immutable and safe for concurrent use.
type Tool struct {
	def      Def
	schema   json.RawMessage
	resolved *jsonschema.Resolved
	// run decodes validated arguments into In, runs the handler and returns
	// Out (as any) for encoding.
	run func(ctx context.Context, req *Request, args json.RawMessage) (any, error)
}

// Name is the name the model calls the tool by.
func (t *Tool) Name() string { return t.def.Name }

// Description is the model-facing description.
func (t *Tool) Description() string { return t.def.Description }

// Risk is the declared risk.
func (t *Tool) Risk() Risk { return t.def.Risk }

// Tier is where the tool runs.
func (t *Tool) Tier() Tier { return t.def.Tier }

// ReadOnly reports whether the tool only reads (see Def.ReadOnly).
func (t *Tool) ReadOnly() bool { return t.def.ReadOnly }

// OptIn reports whether only agents naming the tool are offered it (see
// Def.OptIn).
func (t *Tool) OptIn() bool { return t.def.OptIn }

// Schema is the input JSON Schema the model sees. It is byte-identical for
// every call, so a prompt built from it stays cacheable.
func (t *Tool) Schema() json.RawMessage {
	return append(json.RawMessage(nil), t.schema...)
}

// New builds a tool without registering it, for tool sets kept apart from
// a registry (headless equivalents share their frontend tool's name).
// In must be a struct type: its exported fields, by their json names, are
// the tool's arguments; fields without omitempty/omitzero are required, and
// a `jsonschema:"..."` tag is the field's description for the model.
func New[In, Out any](d Def, h Handler[In, Out]) (*Tool, error) {
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
	s, err := inputSchema[In]()
	if err != nil {
		return nil, fmt.Errorf("building tool %q: %w", d.Name, err)
	}
	if d.SchemaFunc != nil {
		if err := d.SchemaFunc(s); err != nil {
			return nil, fmt.Errorf("building tool %q: adjusting schema: %w", d.Name, err)
		}
		if s.Type != "object" {
			return nil, fmt.Errorf("building tool %q: SchemaFunc changed the schema type to %q, want \"object\"", d.Name, s.Type)
		}
	}
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, fmt.Errorf("building tool %q: resolving input schema: %w", d.Name, err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("building tool %q: encoding input schema: %w", d.Name, err)
	}
	return &Tool{
		def:      d,
		schema:   raw,
		resolved: resolved,
		run: func(ctx context.Context, req *Request, args json.RawMessage) (any, error) {
			var in In
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, &argsError{msg: err.Error()}
			}
			return h(ctx, req, in)
		},
	}, nil
}

func (d Def) validate() error {
	switch {
	case !namePattern.MatchString(d.Name):
		return fmt.Errorf("Def.Name %q must match %s", truncate(d.Name, maxNameLen), namePattern)
	case strings.TrimSpace(d.Description) == "":
		return errors.New("Def.Description is required: the model chooses tools by it")
	case !d.Risk.valid():
		return fmt.Errorf("Def.Risk %q must be one of low, medium, high", d.Risk)
	case d.Tier != "" && !d.Tier.valid():
		return fmt.Errorf("Def.Tier %q must be server or frontend", d.Tier)
	case d.MaxOutputBytes < 0:
		return fmt.Errorf("Def.MaxOutputBytes %d must not be negative", d.MaxOutputBytes)
	}
	return nil
}

// argsError marks arguments that passed the schema but did not decode into
// In; it is reported like a validation error.
type argsError struct{ msg string }

func (e *argsError) Error() string { return e.msg }

// Call runs the tool on the model's arguments for req: it validates them
// against the schema (before the handler ever sees them), fills in
// defaults, decodes them into In, runs the handler and encodes Out. Every
// failure, including a panic in the handler, comes back as an error result;
// Call never panics and never returns a Go error, because the model must
// see what went wrong to correct itself. A nil req reaches the handler as
// an empty Request.
func (t *Tool) Call(ctx context.Context, req *Request, args json.RawMessage) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = errorResult(
				fmt.Sprintf("tool %s failed with an internal error", t.def.Name),
				fmt.Errorf("tool %s panicked: %v\n%s", t.def.Name, v, debug.Stack()),
			)
		}
	}()

	decoded, err := t.prepare(args)
	if err != nil {
		return errorResult(
			fmt.Sprintf("invalid arguments for %s: %s", t.def.Name, err.Error()),
			fmt.Errorf("validating arguments for %s: %w", t.def.Name, err),
		)
	}

	if req == nil {
		req = &Request{}
	}
	out, err := t.run(ctx, req, decoded)
	if err != nil {
		if pe, ok := errors.AsType[*PauseError](err); ok {
			p := pe.Pause
			return Result{Pause: &p}
		}
		if ae, ok := errors.AsType[*argsError](err); ok {
			return errorResult(
				fmt.Sprintf("invalid arguments for %s: %s", t.def.Name, ae.msg),
				fmt.Errorf("decoding arguments for %s: %w", t.def.Name, err),
			)
		}
		return errorResult(err.Error(), fmt.Errorf("running tool %s: %w", t.def.Name, err))
	}

	enc, err := json.Marshal(out)
	if err != nil {
		return errorResult(
			fmt.Sprintf("tool %s produced output that is not valid JSON", t.def.Name),
			fmt.Errorf("encoding output of %s: %w", t.def.Name, err),
		)
	}
	if len(enc) > t.def.MaxOutputBytes {
		return errorResult(
			fmt.Sprintf("tool %s produced %d bytes of output, more than the limit of %d; ask for less", t.def.Name, len(enc), t.def.MaxOutputBytes),
			fmt.Errorf("output of %s is %d bytes, limit %d", t.def.Name, len(enc), t.def.MaxOutputBytes),
		)
	}
	res = Result{Output: enc}
	if a, ok := out.(Attacher); ok {
		res.Attachments = a.Attachments()
	}
	return res
}

// prepare validates the raw arguments and returns them with defaults
// applied, ready to decode into In.
func (t *Tool) prepare(args json.RawMessage) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(args))
	if trimmed == "" || trimmed == "null" {
		// Providers send no arguments at all for a tool without parameters.
		trimmed = "{}"
	}
	// Validate a float64 decoding (what the validator understands) ...
	var plain any
	if err := json.Unmarshal([]byte(trimmed), &plain); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if _, ok := plain.(map[string]any); !ok {
		return nil, errors.New("arguments must be a JSON object")
	}
	if err := t.resolved.Validate(plain); err != nil {
		return nil, describeValidation(t.resolved.Schema(), plain, err)
	}
	// ... but decode In from a json.Number decoding, so integers beyond
	// 2^53 (ids, amounts in cents) reach the handler exactly.
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var exact map[string]any
	if err := dec.Decode(&exact); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if err := t.resolved.ApplyDefaults(&exact); err != nil {
		return nil, fmt.Errorf("applying defaults: %w", err)
	}
	out, err := json.Marshal(exact)
	if err != nil {
		return nil, fmt.Errorf("re-encoding arguments: %w", err)
	}
	return out, nil
}

// inputSchema infers the object schema for In.
func inputSchema[In any]() (*jsonschema.Schema, error) {
	rt := reflect.TypeFor[In]()
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("input type %s must be a struct, the model's arguments are a JSON object", rt)
	}
	// A json.RawMessage field holds any JSON value; left to inference it
	// would be described as an array of bytes.
	s, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		return nil, fmt.Errorf("inferring input schema from %s: %w", rt, err)
	}
	if s.Properties == nil {
		// OpenAI rejects an object schema without "properties".
		s.Properties = map[string]*jsonschema.Schema{}
	}
	normalizeSlices(s)
	return s, nil
}

// normalizeSlices turns the inferred {"type": ["null","array"]} of Go
// slices into a plain "array": for a tool argument a nil slice and an
// absent one mean the same, and a null would slip past minItems. Models
// also follow a single type more reliably.
func normalizeSlices(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" && s.Types[1] == "array" {
		s.Types = nil
		s.Type = "array"
	}
	for _, p := range s.Properties {
		normalizeSlices(p)
	}
	normalizeSlices(s.Items)
	normalizeSlices(s.AdditionalProperties)
}
