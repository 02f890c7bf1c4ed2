package cards_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

func f64(v float64) *float64 { return &v }

// formResult is a valid result whose one button opens a form of inputs.
func formResult(inputs ...cards.Input) cards.Result {
	return cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{
		{ID: "fill", Label: "Fill in", Kind: cards.ActionSignal, Form: &cards.Form{Inputs: inputs}},
	}}
}

func TestValidateFormNamesTheField(t *testing.T) {
	sel := func(opts ...cards.Option) cards.Input {
		return cards.Input{Name: "pick", Label: "Pick", Type: cards.InputSelect, Options: opts}
	}
	tests := []struct {
		name string
		r    cards.Result
		want string
	}{
		{"no inputs", formResult(), "actions[0].form.inputs: at least one input is required"},
		{"too many inputs", formResult(
			cards.Input{Name: "a", Label: "A", Type: cards.InputText}, cards.Input{Name: "b", Label: "B", Type: cards.InputText},
			cards.Input{Name: "c", Label: "C", Type: cards.InputText}, cards.Input{Name: "d", Label: "D", Type: cards.InputText},
			cards.Input{Name: "e", Label: "E", Type: cards.InputText}, cards.Input{Name: "f", Label: "F", Type: cards.InputText}),
			"actions[0].form.inputs: too many: 6, at most 5"},
		{"bad name", formResult(cards.Input{Name: "Check-in", Label: "In", Type: cards.InputDate}), "actions[0].form.inputs[0].name: must be lowercase letters"},
		{"duplicate name", formResult(cards.Input{Name: "d", Label: "A", Type: cards.InputDate}, cards.Input{Name: "d", Label: "B", Type: cards.InputTime}),
			`actions[0].form.inputs[1].name: duplicate of actions[0].form.inputs[0].name "d"`},
		{"no label", formResult(cards.Input{Name: "d", Type: cards.InputDate}), "actions[0].form.inputs[0].label: required"},
		{"long label", formResult(cards.Input{Name: "d", Label: strings.Repeat("x", 46), Type: cards.InputDate}), "actions[0].form.inputs[0].label: too long: 46 characters, at most 45"},
		{"unknown type", formResult(cards.Input{Name: "d", Label: "D", Type: "checkbox"}), "actions[0].form.inputs[0].type: must be one of select, multi_select, date, time, text, number"},
		{"select without options", formResult(sel()), "actions[0].form.inputs[0].options: at least one option is required for a select"},
		{"duplicate option", formResult(sel(cards.Option{Label: "A", Value: "a"}, cards.Option{Label: "B", Value: "a"})), `actions[0].form.inputs[0].options[1].value: duplicate of options[0].value "a"`},
		{"options on text", formResult(cards.Input{Name: "t", Label: "T", Type: cards.InputText, Options: []cards.Option{{Label: "A", Value: "a"}}}),
			"actions[0].form.inputs[0].options: only for inputs of type select or multi_select"},
		{"min above max", formResult(cards.Input{Name: "n", Label: "N", Type: cards.InputNumber, Min: f64(5), Max: f64(1)}), "actions[0].form.inputs[0].min: is above max (1)"},
		{"fractional bound", formResult(cards.Input{Name: "n", Label: "N", Type: cards.InputNumber, Max: f64(1.5)}), "actions[0].form.inputs[0].max: must be a whole number unless decimal is set"},
		{"max length", formResult(cards.Input{Name: "t", Label: "T", Type: cards.InputText, MaxLength: 5000}), "actions[0].form.inputs[0].max_length: must be between 1 and 3000"},
		{"initial date", formResult(cards.Input{Name: "d", Label: "D", Type: cards.InputDate, Initial: json.RawMessage(`"24/12/2026"`)}),
			"actions[0].form.inputs[0].initial: Enter a date as YYYY-MM-DD"},
		{"initial not an option", formResult(cards.Input{Name: "p", Label: "P", Type: cards.InputMultiSelect, Options: []cards.Option{{Label: "A", Value: "a"}}, Initial: json.RawMessage(`["b"]`)}),
			`actions[0].form.inputs[0].initial: "b" is not one of the choices.`},
		{"initial number type", formResult(cards.Input{Name: "n", Label: "N", Type: cards.InputNumber, Initial: json.RawMessage(`"two"`)}),
			"actions[0].form.inputs[0].initial: must be a number"},
		{"answer replaces a tool arg", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "send", Label: "Send", Kind: cards.ActionTool, Tool: "send_email",
			Args: json.RawMessage(`{"to":"a@example.com"}`), Form: &cards.Form{Inputs: []cards.Input{{Name: "to", Label: "To", Type: cards.InputText}}}}}},
			`actions[0].form.inputs[0].name: "to" is already one of the tool's args`},
		{"earliest not a date", formResult(cards.Input{Name: "d", Label: "D", Type: cards.InputDate, Earliest: "tomorrow"}), "actions[0].form.inputs[0].earliest: must be a date as YYYY-MM-DD"},
		{"earliest on text", formResult(cards.Input{Name: "t", Label: "T", Type: cards.InputText, Earliest: "2026-01-01"}), "actions[0].form.inputs[0].earliest: only for inputs of type date"},
		{"long submit label", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "f", Label: "F", Kind: cards.ActionSignal,
			Form: &cards.Form{Submit: strings.Repeat("s", 25), Inputs: []cards.Input{{Name: "t", Label: "T", Type: cards.InputText}}}}}},
			"actions[0].form.submit: too long: 25 characters, at most 24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Validate()
			require.Error(t, err, "want a validation error mentioning %q", tt.want)
			require.Contains(t, err.Error(), tt.want)
			_, err = cards.Stamp(&tt.r, nil)
			require.Error(t, err, "Stamp must refuse what Validate refuses")
		})
	}
}

func TestFormParseTypesAnswers(t *testing.T) {
	r := cardstest.FormResult()
	require.NoError(t, r.Validate())
	form := r.Actions[0].Form
	answers, problems := form.Parse(map[string][]string{
		"day": {"2026-12-31"}, "seating": {"terrace"}, "guests": {" 4 "}, "diet": {"vegan", "gluten_free", "vegan"},
		"notes": {"window seat"}, "stray": {"ignored"},
	})
	require.Empty(t, problems)
	b, err := json.Marshal(answers)
	require.NoError(t, err)
	require.JSONEq(t, `{"day":"2026-12-31","seating":"terrace","guests":4,"diet":["vegan","gluten_free"],"notes":"window seat"}`, string(b),
		"numbers as numbers, a multi-select as an array, a date as YYYY-MM-DD, unknown names dropped")

	answers, problems = form.Parse(map[string][]string{"day": {"2026-12-31"}, "seating": {"inside"}, "diet": {}, "notes": {""}})
	require.Empty(t, problems)
	require.Equal(t, map[string]any{"day": "2026-12-31", "seating": "inside"}, answers, "optional inputs left empty are left out")

	_, problems = form.Parse(map[string][]string{"day": {"2026-02-30"}, "seating": {"rooftop"}, "guests": {"20"}, "notes": {strings.Repeat("n", 501)}})
	require.Equal(t, map[string]string{
		"day":     "Enter a date as YYYY-MM-DD, for example 2026-12-24.",
		"seating": "Pick one of the choices.",
		"guests":  "Enter a number from 1 to 12.",
		"notes":   "Write at most 500 characters (now 501).",
	}, problems)

	_, problems = form.Parse(map[string][]string{"day": {"2026-11-30"}, "seating": {"inside"}})
	require.Equal(t, map[string]string{"day": "Pick a day on or after 2026-12-01."}, problems)

	_, problems = form.Parse(map[string][]string{"guests": {"2.5"}})
	require.Equal(t, "An answer is required.", problems["day"])
	require.Equal(t, "Enter a whole number.", problems["guests"])

	tm := cards.Input{Name: "at", Label: "At", Type: cards.InputTime}
	f := &cards.Form{Inputs: []cards.Input{tm}}
	_, problems = f.Parse(map[string][]string{"at": {"9:30pm"}})
	require.Equal(t, "Enter a time as HH:MM on the 24-hour clock, for example 09:30.", problems["at"])
	answers, problems = f.Parse(map[string][]string{"at": {"21:30"}})
	require.Empty(t, problems)
	require.Equal(t, "21:30", answers["at"])
}

func TestFormButtonIDs(t *testing.T) {
	s, err := cards.Stamp(ptrTo(cardstest.FormResult()), nil)
	require.NoError(t, err)
	id := uuid.New()
	form := cards.ButtonID(id, &s.Actions[0])
	plain := cards.ButtonID(id, &s.Actions[1])
	require.True(t, cards.IsFormActionID(form), "%s opens a form", form)
	require.False(t, cards.IsFormActionID(plain), "%s opens no form", plain)
	require.LessOrEqual(t, len(form), cards.MaxEncodedActionIDLen)
	for _, b := range []string{form, plain} {
		got, act, ok := cards.ParseActionID(b)
		require.True(t, ok, "%s parses", b)
		require.Equal(t, id, got)
		require.Contains(t, []string{"book", "skip"}, act)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestWithoutFormsAsksInText(t *testing.T) {
	s, err := cards.Stamp(ptrTo(cardstest.FormResult()), nil)
	require.NoError(t, err)
	require.True(t, s.HasForm())
	d := s.WithoutForms()
	require.False(t, d.HasForm(), "the degraded card opens no form")
	require.Len(t, d.Actions, 1, "buttons without forms stay")
	require.Equal(t, "skip", d.Actions[0].ID)
	require.True(t, s.HasForm(), "the original card is not changed")
	want := "Pick a day and a table.\n\n📝 Book a table: reply with your answers.\n" +
		"1. Day (a date, YYYY-MM-DD, on or after 2026-12-01; required; default: 2026-12-24)\n" +
		"2. Seating (one of: Inside, Terrace; required)\n" +
		"3. Guests (a whole number from 1 to 12; default: 2)\n" +
		"4. Dietary needs (any of: Vegan, Gluten-free)\n" +
		"5. Notes (text, at most 500 characters)"
	require.Equal(t, want, d.Summary)
	text := d.PlainText()
	require.Contains(t, text, "2. Seating (one of: Inside, Terrace; required)")
	require.NotContains(t, text, "{", "the prompt is text, never JSON")
	require.NotContains(t, text, "[Fill in]")

	settled := s.WithOutcome("✅ Submitted by alice").WithoutForms()
	require.NotContains(t, settled.Summary, "reply with your answers", "a settled card asks nothing")

	plainCard, err := cards.Stamp(&cards.Result{Items: []cards.Item{item("a")}}, nil)
	require.NoError(t, err)
	require.Same(t, plainCard, plainCard.WithoutForms())
}

func TestFormSchemaAndToolArgs(t *testing.T) {
	s, err := cards.InputSchema()
	require.NoError(t, err)
	rs, err := s.Resolve(nil)
	require.NoError(t, err)
	var inst map[string]any
	b, err := json.Marshal(cardstest.FormResult())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &inst))
	require.NoError(t, rs.Validate(inst), "the schema accepts a form with every input type")
	bad := `{"items":[{"title":"a"}],"actions":[{"id":"f","form":{"inputs":[{"name":"x","label":"X","type":"slider"}]}}]}`
	require.NoError(t, json.Unmarshal([]byte(bad), &inst))
	require.Error(t, rs.Validate(inst), "the schema names the input types")

	args, err := cards.MergeArgs(json.RawMessage(`{"to":"a@example.com"}`), map[string]any{"when": "2026-12-24", "n": 3.0})
	require.NoError(t, err)
	require.JSONEq(t, `{"to":"a@example.com","when":"2026-12-24","n":3}`, string(args))
}
