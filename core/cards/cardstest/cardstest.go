// Package cardstest holds what the card renderers' tests share: an example
// result for every template (full and minimal), a fixed entry id, a fake
// sparkline renderer, and a seeded generator of valid results of any size
// for property tests.
package cardstest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
)

// EntryID is the entry id golden files are rendered with.
var EntryID = uuid.MustParse("0190c0de-7a11-7c4d-9e3f-00000000c0de")

// FakeSparkline stands in for headless/chart: it returns deterministic bytes
// that start like a PNG and encode the inputs, so goldens are stable and a
// test can tell which series was drawn.
func FakeSparkline(values []float64, w, h int) ([]byte, error) {
	return fmt.Appendf([]byte("\x89PNG\r\n\x1a\n"), "%dx%d:%v", w, h, values), nil
}

// Example is a named result for golden tests.
type Example struct {
	Name   string
	Result cards.Result
}

func ptr[T any](v T) *T { return &v }

// Examples returns, for every template in the default library, a full and
// a minimal example, plus one for a template that does not exist.
func Examples() []Example {
	full := fullExamples()
	lib := cards.DefaultLibrary()
	var out []Example
	for _, name := range lib.Names() {
		t, _ := lib.Get(name)
		f, ok := full[name]
		if !ok {
			// Kind defaults and the generic default draw the generic sample.
			f = full[cards.DefaultName]
		}
		f.Template, f.Kind = name, t.Kind
		out = append(out,
			Example{Name: name + "_full", Result: f},
			Example{Name: name + "_minimal", Result: cards.Result{
				Template: name, Kind: t.Kind,
				Items: []cards.Item{{Title: "Only a title"}},
			}},
		)
	}
	fb := full["hotel"]
	fb.Template = "hotel_deluxe_v2" // never existed: falls back to the lodging default
	out = append(out, Example{Name: "unknown_template_full", Result: fb})
	return out
}

func fullExamples() map[string]cards.Result {
	return map[string]cards.Result{
		"hotel": {
			Title: "Hotels in Lisbon, 12–15 June", Summary: "Three options near **Baixa**, sorted by value.",
			Items: []cards.Item{
				{
					Title: "Memmo Príncipe Real", Subtitle: "Boutique hotel · Príncipe Real",
					Link: "https://example.com/hotels/memmo", Image: "https://img.example.com/memmo.jpg", ImageAlt: "Rooftop pool at dusk",
					Price:    &cards.Price{Amount: 289, Currency: "EUR", Unit: "night"},
					Rating:   &cards.Rating{Value: 4.7, Count: 1832},
					Rows:     []cards.Row{{Label: "Check-in", Value: "15:00"}, {Label: "Check-out", Value: "12:00"}, {Label: "Cancellation", Value: "Free until 10 June"}},
					Chips:    []string{"Pool", "Free wifi", "Breakfast included"},
					Callouts: []cards.Callout{{Level: cards.LevelWarning, Text: "Only 2 rooms left at this price"}},
				},
				{
					Title: "Hotel Avenida Palace", Subtitle: "Classic · Restauradores", Link: "https://example.com/hotels/avenida",
					Image: "https://img.example.com/avenida.jpg",
					Price: &cards.Price{Amount: 1234.5, Currency: "EUR", Unit: "night"}, Rating: &cards.Rating{Value: 4.4, Count: 2210},
					Chips: []string{"Bar", "Gym"},
				},
				{Title: "Lisbon Calling Hostel", Subtitle: "Hostel · Chiado", Price: &cards.Price{Amount: 35, Currency: "EUR", Unit: "night"}, Rating: &cards.Rating{Value: 9.1, Max: 10, Count: 640}},
			},
			Actions: []cards.Action{{ID: "more", Label: "Show more", Kind: cards.ActionSignal}},
		},
		"flight": {
			Title: "SFO → JFK, Fri 14 June",
			Items: []cards.Item{
				{
					Title: "SFO → JFK", Subtitle: "United UA 1916 · Nonstop", Link: "https://example.com/f/ua1916",
					Price: &cards.Price{Amount: 348.2, Currency: "USD", Unit: "person"},
					Rows:  []cards.Row{{Label: "Depart", Value: "07:05"}, {Label: "Arrive", Value: "15:41"}, {Label: "Duration", Value: "5h 36m"}, {Label: "Stops", Value: "0"}},
					Chips: []string{"Wi-Fi", "Power outlets"},
				},
				{
					Title: "SFO → JFK", Subtitle: "JetBlue B6 816 · 1 stop (BOS)",
					Price:    &cards.Price{Amount: 212, Currency: "USD", Unit: "person"},
					Rows:     []cards.Row{{Label: "Depart", Value: "06:00"}, {Label: "Arrive", Value: "17:20"}},
					Callouts: []cards.Callout{{Level: cards.LevelInfo, Title: "Tight connection", Text: "45 minutes in Boston"}},
				},
			},
			Actions: []cards.Action{{ID: "book_first", Label: "Book UA 1916", Style: cards.StylePrimary, Kind: cards.ActionSignal}},
		},
		"email": {
			Items: []cards.Item{{
				Title: "Q3 planning: draft agenda", Subtitle: "Draft",
				Rows:     []cards.Row{{Label: "To", Value: "alice@example.com, bob@example.com"}, {Label: "Cc", Value: "carol@example.com"}},
				Sections: []cards.Section{{Text: "Hi both,\n\nHere is the draft agenda for Thursday:\n- Review Q2 numbers\n- **Hiring plan**\n- Open questions\n\nSee [the doc](https://docs.example.com/q3) & reply with edits.\n\nThanks,\nDana"}},
				Callouts: []cards.Callout{{Level: cards.LevelInfo, Text: "Nothing is sent until you press Send."}},
			}},
			Actions: []cards.Action{{ID: "send", Label: "Send now"}, {ID: "rewrite", Label: "Make it shorter", Kind: cards.ActionSignal}},
		},
		"stock_quote": {
			Title: "Watchlist",
			Items: []cards.Item{
				{
					Title: "AAPL", Subtitle: "Apple Inc. · NASDAQ", Link: "https://example.com/q/AAPL",
					Price:     &cards.Price{Amount: 227.52, Currency: "USD"},
					Changes:   []cards.Change{{Direction: cards.DirectionUp, Percent: 1.24, Label: "1D"}, {Direction: cards.DirectionDown, Percent: -3.1, Label: "YTD"}},
					Sparkline: &cards.Sparkline{Values: []float64{221.1, 222.4, 220.8, 224.9, 226.0, 225.3, 227.52}, Label: "7 days"},
					Rows:      []cards.Row{{Label: "Volume", Value: "48.2M"}, {Label: "Market cap", Value: "$3.45T"}},
				},
				{
					Title: "7203", Subtitle: "Toyota Motor · TSE",
					Price:     &cards.Price{Amount: 2891, Currency: "JPY"},
					Changes:   []cards.Change{{Direction: cards.DirectionDown, Percent: 0.8, Label: "1D"}},
					Sparkline: &cards.Sparkline{Values: []float64{2950, 2930, 2940, 2905, 2891}},
				},
			},
			Actions: []cards.Action{{ID: "alert", Label: "Alert me at $230", Kind: cards.ActionSignal}},
		},
		"job_listing": {
			Title: "Go jobs, remote (EU)",
			Items: []cards.Item{{
				Title: "Senior Go Engineer", Subtitle: "Acme Queues · Berlin or remote", Link: "https://jobs.example.com/123",
				Image: "https://img.example.com/acme.png", ImageAlt: "Acme logo",
				Price:    &cards.Price{Amount: 95000, Currency: "EUR", Unit: "year"},
				Rows:     []cards.Row{{Label: "Posted", Value: "2 days ago"}, {Label: "Type", Value: "Full-time"}},
				Chips:    []string{"Remote", "Postgres", "Kubernetes"},
				Sections: []cards.Section{{Title: "About the role", Text: "Own the job queue that runs *everything*."}},
			}},
		},
		"recipe": {
			Items: []cards.Item{{
				Title: "Pastéis de nata", Subtitle: "Portuguese custard tarts", Link: "https://recipes.example.com/nata",
				Image: "https://img.example.com/nata.jpg", Rating: &cards.Rating{Value: 4.8, Count: 312},
				Rows:  []cards.Row{{Label: "Time", Value: "1 h 15 min"}, {Label: "Serves", Value: "12"}},
				Chips: []string{"Vegetarian", "Baking"},
				Sections: []cards.Section{
					{Title: "Ingredients", Text: "- 1 sheet puff pastry\n- 250 ml milk\n- 4 egg yolks\n- 100 g sugar"},
					{Title: "Method", Text: "1. Heat the oven to 250 °C.\n2. Whisk yolks and sugar.\n3. Bake **12–15 minutes**."},
				},
			}},
		},
		"briefing": {
			Title: "Morning briefing, Tue 11 June", Summary: "Two things need you today.",
			Items: []cards.Item{
				{
					Title: "Production", Subtitle: "Last 24 h",
					Callouts:  []cards.Callout{{Level: cards.LevelError, Title: "Incident", Text: "Checkout latency p99 > 2 s from 03:10 to 03:40"}, {Level: cards.LevelSuccess, Text: "Deploy 412 shipped"}},
					Changes:   []cards.Change{{Direction: cards.DirectionUp, Percent: 12, Label: "errors vs yesterday"}},
					Sparkline: &cards.Sparkline{Values: []float64{3, 4, 2, 9, 14, 6, 3}, Label: "errors/h"},
				},
				{
					Title:    "Calendar",
					Sections: []cards.Section{{Text: "10:00 Design review\n14:30 1:1 with Sam"}},
					Callouts: []cards.Callout{{Level: cards.LevelWarning, Text: "Design review overlaps the release window"}},
				},
			},
		},
		"news": {
			Title: "Go news this week",
			Items: []cards.Item{
				{Title: "Go 1.26 released", Subtitle: "go.dev blog", Link: "https://go.dev/blog/go1.26", Chips: []string{"release"}},
				{Title: "Proposal: <generic methods> & more", Subtitle: "GitHub", Link: "https://github.com/golang/go/issues/49085"},
				{Title: "Profile-guided optimisation in practice", Subtitle: "Some blog"},
			},
		},
		"weather": {
			Title: "Lisbon, next 3 days",
			Items: []cards.Item{
				{
					Title: "Today", Subtitle: "Sunny", Image: "https://img.example.com/sun.png",
					Rows:      []cards.Row{{Label: "High", Value: "27 °C"}, {Label: "Low", Value: "18 °C"}, {Label: "Wind", Value: "NW 15 km/h"}},
					Sparkline: &cards.Sparkline{Values: []float64{18, 19, 22, 25, 27, 26, 23, 20}, Label: "°C today"},
					Callouts:  []cards.Callout{{Level: cards.LevelWarning, Title: "UV", Text: "Very high UV index from 12:00 to 16:00"}},
				},
				{Title: "Wednesday", Subtitle: "Cloudy", Rows: []cards.Row{{Label: "High", Value: "23 °C"}, {Label: "Low", Value: "17 °C"}}},
				{Title: "Thursday", Subtitle: "Showers", Rows: []cards.Row{{Label: "High", Value: "21 °C"}, {Label: "Low", Value: "16 °C"}}, Chips: []string{"70% rain"}},
			},
		},
		"calendar_event": {
			Items: []cards.Item{{
				Title: "Design review: cards", Subtitle: "Thu 13 June, 10:00–11:00", Link: "https://cal.example.com/e/42",
				Rows:     []cards.Row{{Label: "Where", Value: "Room 4 / Meet"}, {Label: "Who", Value: "Alice, Bob, Dana"}},
				Callouts: []cards.Callout{{Level: cards.LevelWarning, Text: "Overlaps with “Release window”"}},
			}},
			Actions: []cards.Action{{ID: "accept", Label: "Accept", Style: cards.StylePrimary, Kind: cards.ActionSignal}, {ID: "decline", Label: "Decline", Style: cards.StyleDanger, Kind: cards.ActionSignal}},
		},
		"task_list": {
			Title: "Release checklist",
			Items: []cards.Item{
				{Title: "Tag v1.4.0", Done: ptr(true)},
				{Title: "Write release notes", Done: ptr(false), Subtitle: "due Friday", Chips: []string{"docs"}},
				{Title: "Announce in #general", Done: ptr(false), Link: "https://example.com/announce"},
			},
			Actions: []cards.Action{{ID: "done_all", Label: "Mark all done", Kind: cards.ActionTool, Tool: "tasks_complete", Args: json.RawMessage(`{"list": "release"}`)}},
		},
		cards.DefaultName: {
			Title: "Results", Summary: "What I found.",
			Items: []cards.Item{
				{
					Title: "First result", Subtitle: "A subtitle", Link: "https://example.com/1", Image: "https://img.example.com/1.png",
					Price: &cards.Price{Amount: 12.5, Currency: "GBP"}, Rating: &cards.Rating{Value: 3.5},
					Rows:  []cards.Row{{Label: "Owner", Value: "Dana"}, {Label: "Status", Value: "Open"}},
					Chips: []string{"new"}, Callouts: []cards.Callout{{Level: cards.LevelInfo, Text: "Just in"}},
					Sections:  []cards.Section{{Title: "Notes", Text: "Some _notes_."}},
					Changes:   []cards.Change{{Direction: cards.DirectionFlat, Percent: 0}},
					Sparkline: &cards.Sparkline{Values: []float64{1, 2, 3, 2, 1}},
				},
				{Title: "Second result"},
			},
			Actions: []cards.Action{{ID: "pick", Label: "Pick the first", Kind: cards.ActionSignal}},
		},
	}
}

// Generator makes valid results of every size from a seed.
type Generator struct {
	rng *rand.Rand
	lib *cards.Library
}

// NewGenerator returns a generator seeded with seed, drawing template names
// from lib (and some that do not exist).
func NewGenerator(seed uint64, lib *cards.Library) *Generator {
	return &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), lib: lib}
}

// alphabets mixes what breaks renderers: markup Slack and Discord treat
// specially, multi-byte runes, combining marks, emoji sequences, flags.
var alphabets = [][]string{
	strings.Split("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?", ""),
	{"<", ">", "&", "*", "_", "~", "`", "```", "[", "]", "(", ")", "|", "#", "\n", "- ", "> ", "<!channel>", "&amp;", "@everyone", "**"},
	{"é", "ß", "ø", "日本", "語", "中文", "한국어", "العربية", "עברית", "Ω", "€", "₹", "▁", "█"},
	{"e\u0301", "a\u0308", "\u0301", "\u200d", "\ufe0f", "👍🏽", "👨‍👩‍👧‍👦", "🇵🇹", "🇯🇵", "🏳️‍🌈", "😀", "\U0001F1E6"},
}

func (g *Generator) intn(n int) int { return g.rng.IntN(n) }

// size picks a length: mostly short, sometimes long, rarely huge.
func (g *Generator) size(short, long, huge int) int {
	switch p := g.rng.Float64(); {
	case p < 0.8:
		return g.intn(short + 1)
	case p < 0.97:
		return g.intn(long + 1)
	default:
		return huge/2 + g.intn(huge/2+1)
	}
}

// Text returns a string of about n pieces from mixed alphabets.
func (g *Generator) Text(n int) string {
	var b strings.Builder
	count := 0
	// A long text repeats a random chunk: as hard on the renderers, much
	// cheaper to make.
	if n > 400 {
		chunk := g.Text(200)
		for count < n {
			b.WriteString(chunk)
			count += cards.Len(chunk)
		}
	}
	for count < n {
		a := alphabets[g.intn(len(alphabets))]
		if g.intn(4) > 0 {
			a = alphabets[0]
		}
		piece := a[g.intn(len(a))]
		b.WriteString(piece)
		count += cards.Len(piece)
	}
	s := b.String()
	if strings.TrimSpace(s) == "" {
		s = "x" + s
	}
	// Validation caps every text; stay within it.
	if cards.Len(s) > cards.MaxTextLen {
		s = string([]rune(s)[:cards.MaxTextLen])
	}
	return s
}

func (g *Generator) text() string { return g.Text(1 + g.size(30, 600, 10000)) }

func (g *Generator) url(path string) string {
	u := "https://example.com/" + path + "/" + fmt.Sprint(g.intn(1e6))
	if g.intn(20) == 0 {
		u += "?q=" + strings.Repeat("a&b", g.intn(600))
	}
	return u
}

// Result generates one valid result.
func (g *Generator) Result() cards.Result {
	var r cards.Result
	names := g.lib.Names()
	switch g.intn(5) {
	case 0:
		r.Template = "no_such_template_" + fmt.Sprint(g.intn(100))
	case 1:
	default:
		r.Template = names[g.intn(len(names))]
	}
	if g.intn(3) > 0 {
		r.Kind = cards.Kinds[g.intn(len(cards.Kinds))]
	}
	if g.intn(3) > 0 {
		r.Title = g.text()
	}
	if g.intn(3) == 0 {
		r.Summary = g.text()
	}
	n := 1 + g.size(5, 40, 400)
	for i := 0; i < n; i++ {
		r.Items = append(r.Items, g.item(i))
	}
	r.Actions = g.actions(r.Template)
	return r
}

func (g *Generator) item(i int) cards.Item {
	it := cards.Item{Title: g.text()}
	if g.intn(2) == 0 {
		it.Subtitle = g.text()
	}
	if g.intn(3) == 0 {
		it.Link = g.url(fmt.Sprintf("item/%d", i))
	}
	if g.intn(3) == 0 {
		it.Image = g.url("img") + ".png"
		if g.intn(2) == 0 {
			it.ImageAlt = g.text()
		}
	}
	if g.intn(3) == 0 {
		cur := []string{"USD", "EUR", "JPY", "KWD", "CHF", "XOF"}[g.intn(6)]
		it.Price = &cards.Price{Amount: (g.rng.Float64() - 0.1) * math.Pow(10, float64(g.intn(16))), Currency: cur}
		if g.intn(2) == 0 {
			it.Price.Unit = g.text()
		}
	}
	if g.intn(3) == 0 {
		max := []float64{0, 5, 10, 100}[g.intn(4)]
		top := max
		if top == 0 {
			top = 5
		}
		it.Rating = &cards.Rating{Value: g.rng.Float64() * top, Max: max, Count: g.intn(1e7)}
	}
	for range g.size(3, 30, cards.MaxRows) {
		it.Rows = append(it.Rows, cards.Row{Label: g.text(), Value: g.text()})
	}
	for range g.size(3, 20, cards.MaxChips) {
		it.Chips = append(it.Chips, g.text())
	}
	for range g.size(1, 10, cards.MaxCallouts) {
		lv := []string{cards.LevelInfo, cards.LevelSuccess, cards.LevelWarning, cards.LevelError}[g.intn(4)]
		c := cards.Callout{Level: lv, Text: g.text()}
		if g.intn(2) == 0 {
			c.Title = g.text()
		}
		it.Callouts = append(it.Callouts, c)
	}
	for range g.size(1, 10, cards.MaxSections) {
		s := cards.Section{Text: g.text()}
		if g.intn(2) == 0 {
			s.Title = g.text()
		}
		it.Sections = append(it.Sections, s)
	}
	for range g.size(1, 3, cards.MaxChanges) {
		d := []string{cards.DirectionUp, cards.DirectionDown, cards.DirectionFlat}[g.intn(3)]
		p := g.rng.Float64() * 100
		if d == cards.DirectionDown && g.intn(2) == 0 {
			p = -p
		}
		c := cards.Change{Direction: d, Percent: p}
		if g.intn(2) == 0 {
			c.Label = g.text()
		}
		it.Changes = append(it.Changes, c)
	}
	if g.intn(3) == 0 {
		sp := &cards.Sparkline{}
		for range 2 + g.size(20, 200, cards.MaxSparkValues-2) {
			sp.Values = append(sp.Values, (g.rng.Float64()-0.5)*math.Pow(10, float64(g.intn(12))))
		}
		if g.intn(2) == 0 {
			sp.Label = g.text()
		}
		it.Sparkline = sp
	}
	if g.intn(4) == 0 {
		it.Done = ptr(g.intn(2) == 0)
	}
	return it
}

func (g *Generator) actions(template string) []cards.Action {
	room := cards.MaxActions
	if t, ok := g.lib.Get(template); ok {
		for _, a := range t.Actions {
			if a.Auto {
				room--
			}
		}
	}
	n := min(room, g.size(3, 10, cards.MaxActions))
	var out []cards.Action
	for i := range n {
		id := fmt.Sprintf("a%d", i)
		if g.intn(3) == 0 {
			id += "-" + strings.Repeat("x", g.intn(cards.MaxActionIDLen-len(id)))
		}
		a := cards.Action{ID: id, Label: g.text(), Style: []string{"", cards.StylePrimary, cards.StyleDanger}[g.intn(3)]}
		if g.intn(2) == 0 {
			a.Kind = cards.ActionSignal
		} else {
			a.Kind, a.Tool = cards.ActionTool, "tool_"+fmt.Sprint(g.intn(50))
			if g.intn(2) == 0 {
				args, _ := json.Marshal(map[string]string{"k": g.Text(1 + g.intn(50))})
				a.Args = args
			}
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b cards.Action) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Fuzz builds a result for a fuzz target from arbitrary text: pick chooses
// the template (and whether the card has a button), and the texts fill
// every string a card shows, one item after another. Links are kept only
// when they are web addresses, so most results pass cards.Stamp; a target
// that wants a stored card's unchecked link sets it after stamping.
func Fuzz(lib *cards.Library, pick uint8, texts ...string) cards.Result {
	at := func(i int) string {
		if len(texts) == 0 {
			return ""
		}
		return texts[i%len(texts)]
	}
	names := lib.Names()
	r := cards.Result{Title: at(0), Summary: at(1)}
	if len(names) > 0 {
		r.Template = names[int(pick)%len(names)]
	}
	link := ""
	if strings.HasPrefix(at(4), "https://") && !strings.ContainsAny(at(4), " \t\n") {
		link = at(4)
	}
	for i := range 1 + int(pick)%3 {
		r.Items = append(r.Items, cards.Item{
			Title: at(2 + i), Subtitle: at(3), Link: link,
			Rows:     []cards.Row{{Label: at(5), Value: at(6)}},
			Chips:    []string{at(5)},
			Callouts: []cards.Callout{{Level: "warning", Title: at(5), Text: at(7)}},
			Sections: []cards.Section{{Title: at(5), Text: at(7)}, {Text: at(1)}},
			Price:    &cards.Price{Amount: float64(pick), Currency: "USD", Unit: at(6)},
		})
	}
	if pick&0x80 != 0 {
		r.Actions = []cards.Action{{ID: "ok", Label: at(6), Kind: cards.ActionSignal}}
	}
	return r
}

// FormResult is a result whose "book" button opens a form with one input
// of every type: the example the renderers' form tests draw.
func FormResult() cards.Result {
	return cards.Result{
		Kind: cards.KindEvent, Title: "Dinner at Tasca", Summary: "Pick a day and a table.",
		Items: []cards.Item{{Title: "Tasca do Chico", Subtitle: "Fado · Bairro Alto"}},
		Actions: []cards.Action{
			{ID: "book", Label: "Fill in", Kind: cards.ActionSignal, Style: cards.StylePrimary, Form: &cards.Form{
				Title: "Book a table", Submit: "Book",
				Inputs: []cards.Input{
					{Name: "day", Label: "Day", Type: cards.InputDate, Required: true, Initial: json.RawMessage(`"2026-12-24"`), Earliest: "2026-12-01"},
					{Name: "seating", Label: "Seating", Type: cards.InputSelect, Required: true, Placeholder: "Choose…",
						Options: []cards.Option{{Label: "Inside", Value: "inside"}, {Label: "Terrace", Value: "terrace"}}},
					{Name: "guests", Label: "Guests", Type: cards.InputNumber, Min: ptr(1.0), Max: ptr(12.0), Initial: json.RawMessage(`2`)},
					{Name: "diet", Label: "Dietary needs", Type: cards.InputMultiSelect,
						Options: []cards.Option{{Label: "Vegan", Value: "vegan"}, {Label: "Gluten-free", Value: "gluten_free"}}},
					{Name: "notes", Label: "Notes", Type: cards.InputText, Multiline: true, MaxLength: 500, Placeholder: "Anything we should know"},
				},
			}},
			{ID: "skip", Label: "Not now", Kind: cards.ActionSignal},
		},
	}
}
