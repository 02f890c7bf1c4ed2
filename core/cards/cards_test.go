package cards_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"github.com/stretchr/testify/require"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func item(title string) cards.Item { return cards.Item{Title: title} }

func TestValidateReportsFieldAndReason(t *testing.T) {
	tests := []struct {
		name string
		r    cards.Result
		want []string // substrings of the error, each naming a field
	}{
		{"no items", cards.Result{Kind: cards.KindGeneric}, []string{"items: at least one item is required"}},
		{"unknown kind", cards.Result{Kind: "hotelz", Items: []cards.Item{item("a")}}, []string{"kind: must be one of"}},
		{"bad template name", cards.Result{Template: "Hotel Deluxe", Items: []cards.Item{item("a")}}, []string{"template: must be a template name"}},
		{"empty title", cards.Result{Items: []cards.Item{item("a"), item(" ")}}, []string{"items[1].title: required"}},
		{"currency", cards.Result{Items: []cards.Item{item("a"), item("b"), {Title: "c", Price: &cards.Price{Amount: 1, Currency: "dollars"}}}},
			[]string{"items[2].price.currency: must be a 3-letter ISO 4217 code"}},
		{"infinite price", cards.Result{Items: []cards.Item{{Title: "a", Price: &cards.Price{Amount: math.Inf(1), Currency: "USD"}}}}, []string{"items[0].price.amount: must be a finite number"}},
		{"rating above max", cards.Result{Items: []cards.Item{{Title: "a", Rating: &cards.Rating{Value: 6}}}}, []string{"items[0].rating.value: must be between 0 and max (5)"}},
		{"link scheme", cards.Result{Items: []cards.Item{{Title: "a", Link: "javascript:alert(1)"}}}, []string{"items[0].link: must be an absolute http or https URL"}},
		{"image relative", cards.Result{Items: []cards.Item{{Title: "a", Image: "/img.png"}}}, []string{"items[0].image: must be an absolute http or https URL"}},
		{"row without value", cards.Result{Items: []cards.Item{{Title: "a", Rows: []cards.Row{{Label: "To"}}}}}, []string{"items[0].rows[0].value: required"}},
		{"callout level", cards.Result{Items: []cards.Item{{Title: "a", Callouts: []cards.Callout{{Level: "danger", Text: "x"}}}}}, []string{"items[0].callouts[0].level: must be info, success, warning or error"}},
		{"change sign", cards.Result{Items: []cards.Item{{Title: "a", Changes: []cards.Change{{Direction: cards.DirectionUp, Percent: -2}}}}}, []string{"items[0].changes[0].percent: is negative but direction is up"}},
		{"change direction", cards.Result{Items: []cards.Item{{Title: "a", Changes: []cards.Change{{Direction: "sideways"}}}}}, []string{"items[0].changes[0].direction: must be up, down or flat"}},
		{"short sparkline", cards.Result{Items: []cards.Item{{Title: "a", Sparkline: &cards.Sparkline{Values: []float64{1}}}}}, []string{"items[0].sparkline.values: at least two values are required"}},
		{"nan sparkline", cards.Result{Items: []cards.Item{{Title: "a", Sparkline: &cards.Sparkline{Values: []float64{1, math.NaN()}}}}}, []string{"items[0].sparkline.values[1]: must be a finite number"}},
		{"too long", cards.Result{Items: []cards.Item{{Title: strings.Repeat("é", cards.MaxTextLen+1)}}}, []string{"items[0].title: too long: 20001 characters, at most 20000"}},
		{"too many items", cards.Result{Items: make([]cards.Item, cards.MaxItems+1)}, []string{"items: too many: 501, at most 500"}},
		{"action id", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "Send Now", Label: "x", Kind: cards.ActionSignal}}}, []string{"actions[0].id: must be lowercase"}},
		{"action id too long", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: strings.Repeat("a", 33), Label: "x", Kind: cards.ActionSignal}}}, []string{"actions[0].id: must be lowercase letters, digits, _ or -, at most 32"}},
		{"duplicate action", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "go", Label: "x", Kind: cards.ActionSignal}, {ID: "go", Label: "y", Kind: cards.ActionSignal}}}, []string{`actions[1].id: duplicate of actions[0].id "go"`}},
		{"signal with tool", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "go", Label: "x", Kind: cards.ActionSignal, Tool: "send_email"}}}, []string{"actions[0].tool: must be empty for an action of kind signal"}},
		{"args not object", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "go", Label: "x", Kind: cards.ActionTool, Tool: "t", Args: json.RawMessage(`[1]`)}}}, []string{"actions[0].args: must be a JSON object"}},
		{"args invalid", cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "go", Label: "x", Kind: cards.ActionTool, Tool: "t", Args: json.RawMessage(`{`)}}}, []string{"actions[0].args: must be valid JSON"}},
		{"several at once", cards.Result{Kind: "x", Items: []cards.Item{{Title: ""}}}, []string{"kind:", "items[0].title: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Validate()
			require.Error(t, err, "expected the result to be rejected")
			var ve *cards.ValidationError
			require.True(t, errors.As(err, &ve), "expected a *ValidationError, got %T", err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w, "error should name the field and the reason")
			}
		})
	}
}

func TestValidateAcceptsEveryExample(t *testing.T) {
	for _, ex := range cardstest.Examples() {
		require.NoError(t, ex.Result.Validate(), "example %s should be valid", ex.Name)
	}
}

func TestValidateCapsReportedProblems(t *testing.T) {
	r := cards.Result{Items: make([]cards.Item, 30)}
	err := r.Validate()
	var ve *cards.ValidationError
	require.True(t, errors.As(err, &ve))
	require.Len(t, ve.Problems, 10, "only the first ten problems are listed")
	require.Equal(t, 20, ve.More)
	require.Contains(t, err.Error(), "and 20 more problems")
}

func TestStampResolvesTemplate(t *testing.T) {
	lib := cards.DefaultLibrary()
	noLodgingDefault := cards.DefaultLibrary()
	noLodgingDefault.Remove("default_lodging")
	empty, err := cards.NewLibrary()
	require.NoError(t, err)
	tests := []struct {
		name     string
		lib      *cards.Library
		kind     string
		template string
		want     string
		fallback bool
	}{
		{"known template", lib, "", "hotel", "hotel", false},
		{"known template, kind from the template", lib, cards.KindFinance, "hotel", "hotel", false},
		{"unknown template falls back to the kind default", lib, cards.KindLodging, "hotel_v9", "default_lodging", true},
		{"no template uses the kind default", lib, cards.KindNews, "", "default_news", false},
		{"unknown template and no kind", lib, "", "nope", "default", true},
		{"kind default removed", noLodgingDefault, cards.KindLodging, "nope", "default", true},
		{"empty library still draws", empty, cards.KindLodging, "hotel", "default", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := cards.Stamp(&cards.Result{Kind: tt.kind, Template: tt.template, Items: []cards.Item{item("a")}}, tt.lib)
			require.NoError(t, err)
			require.Equal(t, tt.want, s.Layout.Name, "resolved layout")
			require.Equal(t, tt.fallback, s.Fallback(), "fallback flag")
			require.NotEmpty(t, s.Layout.Label, "a fallback layout still has a label")
		})
	}
}

func emailResult() cards.Result {
	return cards.Result{Template: "email", Kind: cards.KindMessage, Items: []cards.Item{{
		Title:    "Lunch?",
		Rows:     []cards.Row{{Label: "To", Value: "bob@example.com"}},
		Sections: []cards.Section{{Text: "Are you free"}, {Text: "on Friday?"}},
	}}}
}

func TestStampEmailActionsSendWhatTheCardShows(t *testing.T) {
	r := emailResult()
	// The model tries to send to someone else than the card shows.
	r.Actions = []cards.Action{{ID: "send", Args: json.RawMessage(`{"to": "eve@example.com", "priority": "high"}`)}}
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	require.Len(t, s.Actions, 2, "send and save_draft are added by the template")
	send, ok := s.Action("send")
	require.True(t, ok)
	require.Equal(t, cards.ActionTool, send.Kind)
	require.Equal(t, cards.ToolSendEmail, send.Tool)
	require.Equal(t, "Send", send.Label)
	var args map[string]string
	require.NoError(t, json.Unmarshal(send.Args, &args))
	require.Equal(t, map[string]string{
		"to": "bob@example.com", "subject": "Lunch?", "body": "Are you free\n\non Friday?", "priority": "high",
	}, args, "displayed fields must win over the model's args; extra args are kept")
	draft, ok := s.Action("save_draft")
	require.True(t, ok)
	require.Equal(t, cards.ToolSaveEmailDraft, draft.Tool)
}

func TestStampRejectsRedirectedTemplateAction(t *testing.T) {
	r := emailResult()
	r.Actions = []cards.Action{{ID: "send", Kind: cards.ActionTool, Tool: "delete_mailbox"}}
	_, err := cards.Stamp(&r, nil)
	require.ErrorContains(t, err, `actions[0].tool: the template declares "send" to run "send_email"`)
}

func TestStampRequiresCompleteActions(t *testing.T) {
	r := cards.Result{Items: []cards.Item{item("a")}, Actions: []cards.Action{{ID: "go"}}}
	_, err := cards.Stamp(&r, nil)
	require.ErrorContains(t, err, "actions[0].label: required")
	require.ErrorContains(t, err, `actions[0].kind: required: tool or signal (the template declares no action "go")`)
}

func TestStampCopiesTheResult(t *testing.T) {
	r := cardstest.Examples()[0].Result
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	before, err := json.Marshal(s)
	require.NoError(t, err)
	r.Items[0].Title = "changed"
	if r.Items[0].Price != nil {
		r.Items[0].Price.Amount = -1
	}
	if len(r.Items[0].Rows) > 0 {
		r.Items[0].Rows[0].Value = "changed"
	}
	after, err := json.Marshal(s)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "changing the result after stamping must not change the card")
}

func TestStampedRoundTripsJSON(t *testing.T) {
	for _, ex := range cardstest.Examples() {
		t.Run(ex.Name, func(t *testing.T) {
			s, err := cards.Stamp(&ex.Result, nil)
			require.NoError(t, err)
			b1, err := json.Marshal(s)
			require.NoError(t, err)
			var back cards.Stamped
			require.NoError(t, json.Unmarshal(b1, &back))
			b2, err := json.Marshal(&back)
			require.NoError(t, err)
			require.Equal(t, string(b1), string(b2), "marshal → unmarshal → marshal must give the same bytes")
			require.Equal(t, s.PlainText(), back.PlainText())
		})
	}
}

func TestStampedSurvivesTemplateChange(t *testing.T) {
	lib := cards.DefaultLibrary()
	r := cardstest.Examples()[0].Result // a full example
	s, err := cards.Stamp(&r, lib)
	require.NoError(t, err)
	saved, err := json.Marshal(s)
	require.NoError(t, err)
	text := s.PlainText()

	tmpl, ok := lib.Get(r.Template)
	require.True(t, ok)
	tmpl.Layout.Label, tmpl.Layout.Icon, tmpl.Layout.Style = "Changed", "X", cards.StyleList
	require.NoError(t, lib.Put(tmpl))
	lib.Remove("default_" + tmpl.Kind)

	var back cards.Stamped
	require.NoError(t, json.Unmarshal(saved, &back))
	require.Equal(t, text, back.PlainText(), "a saved card draws as sent after its template changed")
	restamped, err := cards.Stamp(&r, lib)
	require.NoError(t, err)
	require.NotEqual(t, text, restamped.PlainText(), "a new card does pick up the change (else this test proves nothing)")
}

func TestWithOutcomeCopies(t *testing.T) {
	r := emailResult()
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	done := s.WithOutcome("✅ Sent by @alice")
	require.Empty(t, s.Outcome, "the original card is not changed")
	require.Equal(t, "✅ Sent by @alice", done.Outcome)
	require.Contains(t, done.PlainText(), "✅ Sent by @alice")
	require.NotContains(t, done.PlainText(), "[Send]", "buttons give way to the outcome")
	require.Contains(t, s.PlainText(), "[Send] [Save draft]")
	done.Items[0].Title = "x"
	require.Equal(t, "Lunch?", s.Items[0].Title, "the copy is deep")
}

func TestActionIDRoundTrip(t *testing.T) {
	id := uuid.MustParse("0190c0de-7a11-7c4d-9e3f-00000000c0de")
	long := strings.Repeat("z", cards.MaxActionIDLen)
	enc := cards.ActionID(id, long)
	require.LessOrEqual(t, len(enc), 100, "fits Discord's custom_id")
	require.Equal(t, cards.MaxEncodedActionIDLen, len(enc))
	gotID, gotAct, ok := cards.ParseActionID(enc)
	require.True(t, ok)
	require.Equal(t, id, gotID)
	require.Equal(t, long, gotAct)

	for _, bad := range []string{
		"", "card:", "approval:" + id.String() + ":send",
		"card:" + id.String(), "card:" + id.String() + ":",
		"card:" + strings.ToUpper(id.String()) + ":send",
		"card:" + uuid.Nil.String() + ":send",
		"card:" + id.String() + ":" + long + "z",
		"card:" + id.String() + ":Send",
		"card:{" + id.String()[:34] + "}:send",
	} {
		_, _, ok := cards.ParseActionID(bad)
		require.False(t, ok, "ParseActionID(%q) should fail", bad)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 4, "hel…"},
		{"hello", 1, "…"},
		{"hello", 0, ""},
		{"日本語のテキスト", 4, "日本語…"},
		{"cafe\u0301 noir", 5, "caf…"}, // é as e + combining acute is not split
		{"ab 👨‍👩‍👧‍👦 cd", 6, "ab 👨…"},  // family: ZWJ not left dangling
		{"go 🇵🇹🇯🇵", 5, "go…"},          // flags stay whole
		{"go 🇵🇹🇯🇵", 6, "go 🇵🇹…"},
		{"trailing space here", 10, "trailing…"},
	}
	for _, tt := range tests {
		got := cards.Truncate(tt.in, tt.max)
		require.Equal(t, tt.want, got, "Truncate(%q, %d)", tt.in, tt.max)
		require.True(t, utf8.ValidString(got))
		require.LessOrEqual(t, cards.Len(got), max(tt.max, 0))
	}
}

func TestFormatting(t *testing.T) {
	tests := []struct{ got, want string }{
		{cards.FormatPrice(cards.Price{Amount: 1234.5, Currency: "USD", Unit: "night"}), "$1,234.50 / night"},
		{cards.FormatPrice(cards.Price{Amount: 2891, Currency: "JPY"}), "¥2,891"},
		{cards.FormatPrice(cards.Price{Amount: 1.2346, Currency: "KWD"}), "1.235 KWD"}, // three decimals
		{cards.FormatPrice(cards.Price{Amount: -5, Currency: "EUR"}), "-€5.00"},
		{cards.FormatPrice(cards.Price{Amount: 999999.999, Currency: "CHF"}), "1,000,000.00 CHF"},
		{cards.RatingText(cards.Rating{Value: 4.34, Count: 1204}), "★★★★☆ 4.3/5 (1,204)"},
		{cards.RatingText(cards.Rating{Value: 9.1, Max: 10}), "★★★★★ 9.1/10"},
		{cards.ChangeText(cards.Change{Direction: cards.DirectionDown, Percent: -3.1, Label: "YTD"}), "▼ 3.10% YTD"},
		{cards.ChangeText(cards.Change{Direction: cards.DirectionUp, Percent: 1.239}), "▲ 1.24%"},
		{cards.SparklineText([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 24), "▁▂▃▄▅▆▇█"},
		{cards.SparklineText([]float64{5, 5, 5}, 24), "▅▅▅"},
		{cards.SparklineText([]float64{1}, 24), ""},
		{cards.SparklineText([]float64{0, 0, 10, 10}, 2), "▁█"},
	}
	for i, tt := range tests {
		require.Equal(t, tt.want, tt.got, "case %d", i)
	}
}

func TestSparklineWidthIsBounded(t *testing.T) {
	vals := make([]float64, 1000)
	for i := range vals {
		vals[i] = math.Sin(float64(i) / 50)
	}
	require.Equal(t, cards.SparklineWidth, cards.Len(cards.SparklineText(vals, cards.SparklineWidth)))
}

func TestDefaultLibrary(t *testing.T) {
	lib := cards.DefaultLibrary()
	for _, name := range []string{"hotel", "flight", "email", "stock_quote", "job_listing", "recipe", "briefing", "news", "weather", "calendar_event", "task_list", "default"} {
		_, ok := lib.Get(name)
		require.True(t, ok, "the library should hold %s", name)
	}
	for _, kind := range cards.Kinds {
		tm := lib.Default(kind)
		require.Equal(t, kind, tm.Kind, "default for %s", kind)
	}
	desc := lib.Describe()
	require.Contains(t, desc, "- email (kind message):")
	require.Contains(t, desc, "Buttons added for you: send, save_draft.")
	require.NotContains(t, desc, "default_", "kind defaults are not offered by name")

	// Get returns a copy: changing it does not change the library.
	tm, _ := lib.Get("hotel")
	tm.Layout.Label = "x"
	again, _ := lib.Get("hotel")
	require.Equal(t, "Hotels", again.Layout.Label)
	require.NotSame(t, cards.DefaultLibrary(), lib)
}

func TestLibraryPutRejectsBadTemplates(t *testing.T) {
	lib := cards.DefaultLibrary()
	tests := []struct {
		t    *cards.Template
		want string
	}{
		{&cards.Template{Name: "Bad Name", Kind: cards.KindGeneric}, "name must be lowercase"},
		{&cards.Template{Name: "ok", Kind: "nope"}, `kind "nope" is not one of`},
		{&cards.Template{Name: "ok", Kind: cards.KindGeneric, Actions: []cards.ActionSpec{{Action: cards.Action{ID: "x", Label: "X", Kind: cards.ActionTool}}}}, "actions[0].tool: required"},
		{&cards.Template{Name: "ok", Kind: cards.KindGeneric, Actions: []cards.ActionSpec{{Action: cards.Action{ID: "x", Label: "X", Kind: cards.ActionTool, Tool: "t"}, ArgsFrom: map[string]string{"a": "price"}}}}, `unknown field "price"`},
	}
	for _, tt := range tests {
		require.ErrorContains(t, lib.Put(tt.t), tt.want)
	}
}

func TestNormalizedRepairsDamagedLayouts(t *testing.T) {
	l := cards.Layout{Style: "carousel", Image: "huge", MaxItems: 1000, Parts: []string{"rows", cards.PartPrice, cards.PartPrice}, Color: -4}.Normalized()
	require.Equal(t, cards.StyleDetail, l.Style)
	require.Equal(t, cards.ImageThumbnail, l.Image)
	require.Equal(t, 10, l.MaxItems)
	require.Equal(t, cards.PartPrice, l.Parts[0], "named parts keep their place")
	require.Len(t, l.Parts, 8, "every part is listed once")
	require.Equal(t, "Results", l.Label)
	require.Equal(t, cards.KindGeneric, l.Kind)
}

func TestPostResult(t *testing.T) {
	ctx := context.Background()
	out, err := cards.PostResult(ctx, cards.Result{Kind: cards.KindLodging, Template: "hotelz", Items: []cards.Item{item("a")}})
	require.NoError(t, err)
	require.True(t, out.Posted)
	require.True(t, out.Fallback)
	require.Equal(t, "default_lodging", out.Template)
	require.Contains(t, out.Note, `template "hotelz" does not exist`)
	require.NotNil(t, out.Card)
	b, err := json.Marshal(out)
	require.NoError(t, err)
	require.NotContains(t, string(b), `"layout":`, "the card itself is not sent back to the model")

	_, err = cards.PostResult(ctx, cards.Result{Items: []cards.Item{{Title: "a", Price: &cards.Price{Currency: "usd"}}}})
	require.ErrorContains(t, err, "items[0].price.currency: must be a 3-letter ISO 4217 code")

	many := cards.Result{Template: "hotel"}
	for range 12 {
		many.Items = append(many.Items, item("h"))
	}
	out, err = cards.PostResult(ctx, many)
	require.NoError(t, err)
	require.Contains(t, out.Note, "shows 10 items, 2 were counted but not shown", "the model learns that items were cut")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = cards.PostResult(cctx, many)
	require.ErrorIs(t, err, context.Canceled)
}

func TestInputSchema(t *testing.T) {
	s, err := cards.InputSchema()
	require.NoError(t, err)
	args := s.Properties["actions"].Items.Properties["args"]
	require.Equal(t, "object", args.Type, "args must be described as an object, not an array of bytes")
	rs, err := s.Resolve(nil)
	require.NoError(t, err)
	for _, ex := range cardstest.Examples() {
		var inst map[string]any
		b, err := json.Marshal(ex.Result)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &inst))
		require.NoError(t, rs.Validate(inst), "schema should accept example %s", ex.Name)
	}
	for _, bad := range []string{
		`{"items":[{"title":"a"}],"colour":"red"}`,
		`{"items":[{"title":"a"}],"kind":"spaceship"}`,
		`{"items":[{"title":"a","price":{"amount":1,"currency":"usd"}}]}`,
		`{"items":[{"title":"a"}],"actions":[{"id":"go","args":"x"}]}`,
	} {
		var inst map[string]any
		require.NoError(t, json.Unmarshal([]byte(bad), &inst))
		require.Error(t, rs.Validate(inst), "schema should reject %s", bad)
	}
	_ = jsonschema.Schema{}
}

func TestPlainTextGolden(t *testing.T) {
	for _, ex := range cardstest.Examples() {
		if !strings.HasSuffix(ex.Name, "_full") {
			continue
		}
		t.Run(ex.Name, func(t *testing.T) {
			s, err := cards.Stamp(&ex.Result, nil)
			require.NoError(t, err)
			golden(t, filepath.Join("testdata", ex.Name+".txt"), []byte(s.PlainText()+"\n"))
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	require.True(t, bytes.Equal(want, got), "%s differs from the golden file (run go test -update and review the diff):\n%s", path, got)
}

func TestLibraryConcurrentUse(t *testing.T) {
	lib := cards.DefaultLibrary()
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				if w%2 == 0 {
					tm, _ := lib.Get("hotel")
					if tm == nil {
						tm = &cards.Template{Name: "hotel", Kind: cards.KindLodging}
					}
					_ = lib.Put(tm)
					if i%50 == 0 {
						lib.Remove("hotel")
					}
					continue
				}
				r := cards.Result{Template: "hotel", Kind: cards.KindLodging, Items: []cards.Item{{Title: "a"}}}
				if _, err := cards.Stamp(&r, lib); err != nil {
					t.Errorf("stamping while the library changes: %v", err)
				}
				_ = lib.Describe()
			}
		}()
	}
	for range 4 {
		<-done
	}
}
