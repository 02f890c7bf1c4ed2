package cards

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// PostResultName is the name the post_result tool is registered under.
const PostResultName = "post_result"

// sharedDefault is the library PostResult stamps with. It is never changed
// after init, so it is safe to share.
var sharedDefault = DefaultLibrary()

// PostResultOutput is what the model gets back from post_result.
type PostResultOutput struct {
	Posted bool `json:"posted"`
	// Template is the layout used; with Fallback set it is not the one
	// asked for, and Note says why.
	Template string `json:"template"`
	Fallback bool   `json:"fallback,omitempty"`
	Note     string `json:"note,omitempty"`
	Items    int    `json:"items"`
	Buttons  int    `json:"buttons"`
	// Card is the stamped card for the engine to append as a "card" entry.
	// It is not shown to the model.
	Card *Stamped `json:"-"`
}

// PostResult is the post_result tool handler with the default library: it
// validates the result and stamps it. An invalid result returns a
// *ValidationError whose message tells the model what to fix.
func PostResult(ctx context.Context, in Result) (PostResultOutput, error) {
	return NewPostResult(sharedDefault)(ctx, in)
}

// NewPostResult returns a post_result handler stamping with lib.
func NewPostResult(lib *Library) func(ctx context.Context, in Result) (PostResultOutput, error) {
	return func(ctx context.Context, in Result) (PostResultOutput, error) {
		if err := ctx.Err(); err != nil {
			return PostResultOutput{}, fmt.Errorf("posting result: %w", err)
		}
		s, err := Stamp(&in, lib)
		if err != nil {
			return PostResultOutput{}, err
		}
		out := PostResultOutput{
			Posted:   true,
			Template: s.Layout.Name,
			Fallback: s.Fallback(),
			Items:    len(s.Items),
			Buttons:  len(s.Actions),
			Card:     s,
		}
		if out.Fallback {
			out.Note = fmt.Sprintf("template %q does not exist; the card used the default layout for kind %s (%s)", s.Template, s.Layout.Kind, s.Layout.Name)
		}
		if _, hidden := s.Shown(); hidden > 0 {
			if out.Note != "" {
				out.Note += "; "
			}
			out.Note += fmt.Sprintf("the %s layout shows %d items, %d were counted but not shown", s.Layout.Name, len(s.Items)-hidden, hidden)
		}
		return out, nil
	}
}

// PostResultDescription is the tool description for the model, listing the
// library's templates.
func PostResultDescription(lib *Library) string {
	if lib == nil {
		lib = sharedDefault
	}
	return "Post a structured result as a card (instead of prose) when your answer is a set of things: " +
		"hotels, flights, an email draft, quotes, jobs, recipes, a briefing, news, weather, events, tasks. " +
		"Pick a template by name and set kind; fill only the fields you know. " +
		"Buttons: kind \"signal\" tells you when the user clicks; kind \"tool\" runs a tool with args after the permission check. " +
		"A button with a form (inputs: select, multi_select, date, time, text, number) opens it in a window; the answers come back to you as one object keyed by input name, or are added to the tool's args. " +
		"If the call fails, the error says which field to fix.\nTemplates:\n" + lib.Describe()
}

// InputSchema is the JSON Schema of Result for the model. It is generated
// from the type, with enums added for the closed vocabularies and Args
// described as a JSON object (the generator would otherwise describe a
// json.RawMessage as an array of bytes). Register post_result with it.
func InputSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[Result](&jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{
			reflect.TypeFor[json.RawMessage](): {Type: "object"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("generating post_result schema: %w", err)
	}
	enum := func(vals ...string) []any {
		out := make([]any, len(vals))
		for i, v := range vals {
			out[i] = v
		}
		return out
	}
	s.Properties["kind"].Enum = enum(Kinds...)
	item := s.Properties["items"].Items
	item.Properties["callouts"].Items.Properties["level"].Enum = enum(LevelInfo, LevelSuccess, LevelWarning, LevelError)
	item.Properties["changes"].Items.Properties["direction"].Enum = enum(DirectionUp, DirectionDown, DirectionFlat)
	act := s.Properties["actions"].Items
	act.Properties["kind"].Enum = enum(ActionTool, ActionSignal)
	act.Properties["style"].Enum = enum(StyleDefault, StylePrimary, StyleDanger)
	act.Properties["id"].Pattern = "^[a-z0-9][a-z0-9_-]{0,31}$"
	input := act.Properties["form"].Properties["inputs"].Items
	input.Properties["type"].Enum = enum(InputTypes...)
	input.Properties["name"].Pattern = "^[a-z][a-z0-9_]{0,31}$"
	// An initial answer is a string, a number or an array, by type.
	input.Properties["initial"] = &jsonschema.Schema{
		Description: input.Properties["initial"].Description,
		Types:       []string{"string", "number", "array"},
		Items:       &jsonschema.Schema{Type: "string"},
	}
	item.Properties["price"].Properties["currency"].Pattern = "^[A-Z]{3}$"
	return s, nil
}
