package discordcard_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"github.com/stretchr/testify/require"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/discord/discordcard"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

var (
	update = flag.Bool("update", false, "rewrite golden files")
)

type fileInfo struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Bytes       string `json:"bytes"` // the fake renderer's output is text after the PNG magic
}

// message is the create-message payload plus the files sent with it.
type message struct {
	discordgo.MessageSend
	FileInfo []fileInfo `json:"files,omitempty"`
}

func opts() discordcard.Options {
	return discordcard.Options{EntryID: cardstest.EntryID, SparklineFunc: cardstest.FakeSparkline}
}

func payload(t testing.TB, embeds []*discordgo.MessageEmbed, comps []discordgo.MessageComponent, files []*discordgo.File) ([]byte, []string) {
	t.Helper()
	m := message{MessageSend: discordgo.MessageSend{Embeds: embeds, Components: comps}}
	var names []string
	for _, f := range files {
		b, err := io.ReadAll(f.Reader)
		require.NoError(t, err)
		f.Reader = bytes.NewReader(b) // leave it readable for the caller
		m.FileInfo = append(m.FileInfo, fileInfo{Name: f.Name, ContentType: f.ContentType, Bytes: strings.TrimPrefix(string(b), "\x89PNG\r\n\x1a\n")})
		names = append(names, f.Name)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(m), "marshalling message")
	return buf.Bytes(), names
}

func render(t testing.TB, s *cards.Stamped, o discordcard.Options) ([]byte, []string) {
	t.Helper()
	embeds, comps, files, err := discordcard.Render(s, o)
	require.NoError(t, err, "rendering")
	return payload(t, embeds, comps, files)
}

func golden(t *testing.T, name string, got []byte, files []string) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	if !bytes.Equal(want, got) {
		t.Fatalf("%s differs from the golden file (run go test -update and review the diff); got:\n%s", path, got)
	}
	// Every golden is held to Discord's limits, as stored on disk.
	require.NoError(t, discordcard.CheckLimits(want, files), "golden %s breaks Discord's limits", path)
}

func exampleNamed(t *testing.T, name string) cardstest.Example {
	for _, ex := range cardstest.Examples() {
		if ex.Name == name {
			return ex
		}
	}
	t.Fatalf("no example %s", name)
	return cardstest.Example{}
}

func TestGolden(t *testing.T) {
	for _, ex := range cardstest.Examples() {
		t.Run(ex.Name, func(t *testing.T) {
			s, err := cards.Stamp(&ex.Result, nil)
			require.NoError(t, err)
			out, files := render(t, s, opts())
			golden(t, ex.Name, out, files)
		})
	}
}

func TestGoldenOutcome(t *testing.T) {
	ex := exampleNamed(t, "email_full")
	s, err := cards.Stamp(&ex.Result, nil)
	require.NoError(t, err)
	embeds, comps, _, err := discordcard.Render(s.WithOutcome("✅ Sent by @alice"), opts())
	require.NoError(t, err)
	require.NotNil(t, comps, "components must be an empty list, so an edit clears the buttons")
	require.Len(t, comps, 0)
	require.Equal(t, "✅ Sent by @alice", embeds[len(embeds)-1].Footer.Text)
	out, files := payload(t, embeds, comps, nil)
	require.Contains(t, string(out), `"components": []`)
	golden(t, "email_full_outcome", out, files)
}

// A card saved before its template changed or disappeared renders exactly
// as it was sent: byte for byte the golden drawn with the original library.
func TestSavedCardSurvivesTemplateChange(t *testing.T) {
	for _, name := range []string{"hotel_full", "email_full", "stock_quote_full", "news_full"} {
		t.Run(name, func(t *testing.T) {
			ex := exampleNamed(t, name)
			lib := cards.DefaultLibrary()
			s, err := cards.Stamp(&ex.Result, lib)
			require.NoError(t, err)
			saved, err := json.Marshal(s)
			require.NoError(t, err)

			tm, ok := lib.Get(ex.Result.Template)
			require.True(t, ok)
			tm.Layout.Style, tm.Layout.Color, tm.Layout.Label = cards.StyleList, 0x123456, "Changed"
			require.NoError(t, lib.Put(tm))
			changed, err := cards.Stamp(&ex.Result, lib)
			require.NoError(t, err)
			before, _ := render(t, s, opts())
			after, _ := render(t, changed, opts())
			require.NotEqual(t, string(before), string(after), "the change must be visible on new cards, else this test proves nothing")

			for _, step := range []string{"changed", "removed"} {
				if step == "removed" {
					lib.Remove(ex.Result.Template)
					lib.Remove(cards.DefaultPrefix + tm.Kind)
				}
				var back cards.Stamped
				require.NoError(t, json.Unmarshal(saved, &back))
				want, err := os.ReadFile(filepath.Join("testdata", name+".json"))
				require.NoError(t, err)
				got, _ := render(t, &back, opts())
				require.Equal(t, string(want), string(got), "saved card after its template was %s", step)
			}
		})
	}
}

func TestButtonsRouteBack(t *testing.T) {
	r := cards.Result{Items: []cards.Item{{Title: "a"}}}
	for i := range 12 {
		r.Actions = append(r.Actions, cards.Action{ID: strings.Repeat("x", 30) + string(rune('a'+i)), Label: strings.Repeat("L", 100), Kind: cards.ActionSignal, Style: []string{"", cards.StylePrimary, cards.StyleDanger}[i%3]})
	}
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	entry := uuid.MustParse("01900000-0000-7000-8000-000000000042")
	_, comps, _, err := discordcard.Render(s, discordcard.Options{EntryID: entry})
	require.NoError(t, err)
	require.Len(t, comps, 3, "12 buttons make rows of 5, 5 and 2")
	var n int
	for _, c := range comps {
		for _, b := range c.(discordgo.ActionsRow).Components {
			btn := b.(discordgo.Button)
			id, act, ok := cards.ParseActionID(btn.CustomID)
			require.True(t, ok, "custom_id %q must parse", btn.CustomID)
			require.Equal(t, entry, id)
			require.Equal(t, r.Actions[n].ID, act)
			require.LessOrEqual(t, len(btn.CustomID), discordcard.MaxCustomID)
			require.Equal(t, discordcard.MaxButtonLabel, cards.Len(btn.Label))
			require.Equal(t, []discordgo.ButtonStyle{discordgo.SecondaryButton, discordgo.PrimaryButton, discordgo.DangerButton}[n%3], btn.Style)
			n++
		}
	}
	require.Equal(t, 12, n)
}

func TestRenderNeedsEntryIDForButtons(t *testing.T) {
	ex := exampleNamed(t, "email_full")
	s, err := cards.Stamp(&ex.Result, nil)
	require.NoError(t, err)
	_, _, _, err = discordcard.Render(s, discordcard.Options{})
	require.ErrorContains(t, err, "options.EntryID: required")
	_, _, _, err = discordcard.Render(s.WithOutcome("done"), discordcard.Options{})
	require.NoError(t, err)
}

func TestSparklineImage(t *testing.T) {
	ex := exampleNamed(t, "stock_quote_full")
	s, err := cards.Stamp(&ex.Result, nil)
	require.NoError(t, err)

	embeds, _, files, err := discordcard.Render(s, opts())
	require.NoError(t, err)
	require.Len(t, files, 2, "one chart per quote with a sparkline")
	require.Equal(t, "attachment://sparkline-0.png", embeds[0].Image.URL)
	require.Equal(t, "image/png", files[0].ContentType)
	png, err := io.ReadAll(files[0].Reader)
	require.NoError(t, err)
	require.Contains(t, string(png), "480x120:[221.1 222.4", "the first quote's series is drawn at the default size")
	require.Contains(t, embeds[0].Description, "`▁▃▁▅▆▆█` 7 days", "the text sparkline stays")

	// Without a renderer, or when it fails, the card keeps the text line.
	for _, o := range []discordcard.Options{
		{EntryID: cardstest.EntryID},
		{EntryID: cardstest.EntryID, SparklineFunc: func([]float64, int, int) ([]byte, error) { return nil, errors.New("no fonts") }},
	} {
		embeds, _, files, err := discordcard.Render(s, o)
		require.NoError(t, err)
		require.Len(t, files, 0)
		require.True(t, embeds[0].Image == nil, "no image without a chart")
		require.Contains(t, embeds[0].Description, "`▁▃▁▅▆▆█` 7 days")
	}

	// Layouts that do not ask for a chart get none.
	hotel := exampleNamed(t, "hotel_full")
	hotel.Result.Items[0].Sparkline = &cards.Sparkline{Values: []float64{1, 2}}
	s, err = cards.Stamp(&hotel.Result, nil)
	require.NoError(t, err)
	_, _, files, err = discordcard.Render(s, opts())
	require.NoError(t, err)
	require.Len(t, files, 0)
}

func TestDamagedLayoutStillDraws(t *testing.T) {
	raw := `{"v":1,"layout":{"name":"gone","style":"hologram","image":"3d"},"items":[{"title":"Still here","rows":[{"label":"A","value":"B"}]}]}`
	var s cards.Stamped
	require.NoError(t, json.Unmarshal([]byte(raw), &s))
	out, files := render(t, &s, opts())
	require.NoError(t, discordcard.CheckLimits(out, files))
	require.Contains(t, string(out), `"title": "Still here"`)
	require.Contains(t, string(out), `"name": "🔎 Results"`)
}

func TestBudgetSharedBetweenEmbeds(t *testing.T) {
	r := cards.Result{Title: strings.Repeat("T", 1000), Summary: "short"}
	for i := range 10 {
		it := cards.Item{Title: strings.Repeat("t", 300)}
		if i%2 == 0 {
			it.Sections = []cards.Section{{Text: strings.Repeat("d", 5000)}}
			it.Rows = []cards.Row{{Label: "L", Value: strings.Repeat("v", 2000)}}
		}
		r.Items = append(r.Items, it)
	}
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	embeds, comps, files, err := discordcard.Render(s, opts())
	require.NoError(t, err)
	require.Len(t, embeds, 10, "all ten items are shown")
	out, names := payload(t, embeds, comps, files)
	require.NoError(t, discordcard.CheckLimits(out, names))
	total := 0
	for _, e := range embeds {
		total += cards.Len(e.Title) + cards.Len(e.Description)
		if e.Author != nil {
			total += cards.Len(e.Author.Name)
		}
		for _, f := range e.Fields {
			total += cards.Len(f.Name) + cards.Len(f.Value)
		}
	}
	require.True(t, total > 5500, "the budget is used, not wasted (used %d)", total)
}

// Any valid result, however large, renders within Discord's limits.
func TestPropertyWithinLimits(t *testing.T) {
	iterations := propertyIterations
	if testing.Short() {
		iterations = 50
	}
	lib := cards.DefaultLibrary()
	g := cardstest.NewGenerator(20240612, lib)
	for i := range iterations {
		r := g.Result()
		s, err := cards.Stamp(&r, lib)
		if err != nil {
			t.Fatalf("iteration %d: the generator made an invalid result: %v", i, err)
		}
		out, files := render(t, s, opts())
		if err := discordcard.CheckLimits(out, files); err != nil {
			t.Fatalf("iteration %d (template %q, %d items, %d actions): %v", i, r.Template, len(r.Items), len(r.Actions), err)
		}
		if !utf8.Valid(out) || bytes.Contains(out, []byte(`\ufffd`)) {
			t.Fatalf("iteration %d: output is not clean UTF-8", i)
		}
		if len(s.Actions) > 0 && !bytes.Contains(out, []byte(`"custom_id"`)) {
			t.Fatalf("iteration %d: the card's %d buttons were dropped", i, len(s.Actions))
		}
		saved, err := json.Marshal(s)
		require.NoError(t, err)
		var back cards.Stamped
		require.NoError(t, json.Unmarshal(saved, &back))
		if got, _ := render(t, &back, opts()); !bytes.Equal(got, out) {
			t.Fatalf("iteration %d: rendering differs after a JSON round trip", i)
		}
	}
}

func TestCheckLimitsCatchesViolations(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	embed := func(fields string) string { return `{"embeds":[{` + fields + `}]}` }
	tenEmbeds := `{"embeds":[` + strings.TrimSuffix(strings.Repeat(`{"title":"t"},`, 11), ",") + `]}`
	row := func(n int) string {
		return `{"type":1,"components":[` + strings.TrimSuffix(strings.Repeat(`{"type":2,"label":"b","style":1,"custom_id":"x"},`, n), ",") + `]}`
	}
	tests := []struct {
		name    string
		payload string
		files   []string
		want    string
	}{
		{"too many embeds", tenEmbeds, nil, "embeds: 11 embeds, at most 10"},
		{"title", embed(`"title":"` + long(257) + `"`), nil, "embeds[0].title: 257 characters, at most 256"},
		{"description", embed(`"description":"` + long(4097) + `"`), nil, "description: 4097 characters, at most 4096"},
		{"footer", embed(`"title":"t","footer":{"text":"` + long(2049) + `"}`), nil, "footer.text: 2049 characters, at most 2048"},
		{"author", embed(`"author":{"name":"` + long(257) + `"}`), nil, "author.name: 257 characters, at most 256"},
		{"fields", embed(`"fields":[` + strings.TrimSuffix(strings.Repeat(`{"name":"n","value":"v"},`, 26), ",") + `]`), nil, "26 fields, at most 25"},
		{"field name", embed(`"fields":[{"name":"` + long(257) + `","value":"v"}]`), nil, "fields[0].name: 257 characters, at most 256"},
		{"field value", embed(`"fields":[{"name":"n","value":"` + long(1025) + `"}]`), nil, "fields[0].value: 1025 characters, at most 1024"},
		{"empty field", embed(`"fields":[{"name":"","value":"v"}]`), nil, "name and value are required"},
		{"total", `{"embeds":[{"description":"` + long(4000) + `"},{"description":"` + long(2001) + `"}]}`, nil, "6001 characters in all, at most 6000"},
		{"missing attachment", embed(`"title":"t","image":{"url":"attachment://a.png"}`), nil, `refers to attachment "a.png"`},
		{"too many files", embed(`"title":"t"`), strings.Split("a,b,c,d,e,f,g,h,i,j,k", ","), "11 files, at most 10"},
		{"rows", `{"components":[` + strings.TrimSuffix(strings.Repeat(row(1)+",", 6), ",") + `]}`, nil, "6 rows, at most 5"},
		{"buttons per row", `{"components":[` + row(6) + `]}`, nil, "6 buttons, want 1 to 5"},
		{"duplicate custom_id", `{"components":[` + row(2) + `]}`, nil, `duplicate "x"`},
		{"label", `{"components":[{"type":1,"components":[{"type":2,"label":"` + long(81) + `","style":1,"custom_id":"x"}]}]}`, nil, "81 characters, at most 80"},
		{"custom_id", `{"components":[{"type":1,"components":[{"type":2,"label":"b","style":1,"custom_id":"` + long(101) + `"}]}]}`, nil, "custom_id: 101 characters, at most 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorContains(t, discordcard.CheckLimits([]byte(tt.payload), tt.files), tt.want)
		})
	}
}

func TestEmptyCardStillDraws(t *testing.T) {
	for _, raw := range []string{`{}`, `{"v":1,"layout":{"style":"list"},"items":[]}`, `{"items":[{"title":""}]}`} {
		var s cards.Stamped
		require.NoError(t, json.Unmarshal([]byte(raw), &s))
		out, files := render(t, &s, opts())
		require.NoError(t, discordcard.CheckLimits(out, files), "card %s", raw)
		require.Contains(t, string(out), "Results", "card %s shows the generic heading", raw)
	}
}

func BenchmarkRender(b *testing.B) {
	lib := cards.DefaultLibrary()
	var small *cards.Stamped
	for _, ex := range cardstest.Examples() {
		if ex.Name == "hotel_full" {
			small, _ = cards.Stamp(&ex.Result, lib)
		}
	}
	g := cardstest.NewGenerator(7, lib)
	var large *cards.Stamped
	for large == nil || len(large.Items) < 300 {
		r := g.Result()
		large, _ = cards.Stamp(&r, lib)
	}
	for _, bc := range []struct {
		name string
		s    *cards.Stamped
	}{{"hotel_full", small}, {"generated_300_items", large}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, _, err := discordcard.Render(bc.s, opts()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
