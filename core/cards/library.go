package cards

import "fmt"

// Tools the built-in templates' buttons run. The lead registers tools under
// these names; a button whose tool is missing fails at the guard with a
// visible outcome, never silently.
const (
	ToolSendEmail      = "send_email"
	ToolSaveEmailDraft = "save_email_draft"
)

func genericLayout() Layout {
	return Layout{
		Name: DefaultName, Kind: KindGeneric, Label: "Results", Icon: "🔎",
		Color: 0x5865F2, Style: StyleDetail, Image: ImageThumbnail,
		MaxItems: 10, InlineRows: true,
	}
}

func genericTemplate() *Template {
	return &Template{
		Name: DefaultName, Kind: KindGeneric, Layout: genericLayout(),
		Description: "any results: title, subtitle, rows, chips, callouts, text.",
	}
}

// kindDefaults are the default layouts per kind: what an unknown or deleted
// template falls back to.
var kindDefaults = map[string]Layout{
	KindLodging:  {Label: "Places to stay", Icon: "🏨", Color: 0x2E86AB, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 10, InlineRows: true, Parts: []string{PartSubtitle, PartPrice, PartRating}},
	KindTravel:   {Label: "Trips", Icon: "✈️", Color: 0x3A86FF, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 10, InlineRows: true, Parts: []string{PartSubtitle, PartPrice}},
	KindMessage:  {Label: "Message", Icon: "✉️", Color: 0x6C757D, Style: StyleDetail, Image: ImageNone, MaxItems: 3, Parts: []string{PartSubtitle, PartSections}},
	KindFinance:  {Label: "Markets", Icon: "📈", Color: 0x2A9D8F, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 10, InlineRows: true, Parts: []string{PartPrice, PartChanges, PartSparkline}, ChangeColor: true},
	KindJob:      {Label: "Jobs", Icon: "💼", Color: 0x8338EC, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 10, InlineRows: true, Parts: []string{PartSubtitle, PartPrice, PartChips}},
	KindRecipe:   {Label: "Recipes", Icon: "🍳", Color: 0xF4A261, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 5, InlineRows: true, Parts: []string{PartSubtitle, PartRating}},
	KindBriefing: {Label: "Briefing", Icon: "📋", Color: 0x264653, Style: StyleDetail, Image: ImageNone, MaxItems: 10, Parts: []string{PartSubtitle, PartCallouts, PartSections}},
	KindNews:     {Label: "News", Icon: "📰", Color: 0xE76F51, Style: StyleList, Image: ImageNone, MaxItems: 15, Parts: []string{PartSubtitle, PartChips}},
	KindWeather:  {Label: "Weather", Icon: "🌤️", Color: 0x4CC9F0, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 7, InlineRows: true, Parts: []string{PartSubtitle, PartChanges}},
	KindEvent:    {Label: "Events", Icon: "📅", Color: 0x7209B7, Style: StyleDetail, Image: ImageNone, MaxItems: 10, Parts: []string{PartSubtitle, PartCallouts}},
	KindTasks:    {Label: "Tasks", Icon: "✅", Color: 0x06D6A0, Style: StyleList, Image: ImageNone, MaxItems: 50, Parts: []string{PartSubtitle, PartChips}},
}

// emailArgs builds the send/save arguments from what the email card shows.
var emailArgs = map[string]string{
	"to": "row:to", "cc": "row:cc", "bcc": "row:bcc",
	"subject": "title", "body": "body",
}

func builtinTemplates() []*Template {
	ts := []*Template{
		{
			Name: "hotel", Kind: KindLodging,
			Description: "hotels or rentals: image, price per night, rating, rows such as Check-in, chips for amenities.",
			Layout:      Layout{Label: "Hotels", Icon: "🏨", Color: 0x2E86AB, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 10, InlineRows: true, Parts: []string{PartSubtitle, PartPrice, PartRating, PartChips, PartCallouts, PartSections}},
		},
		{
			Name: "flight", Kind: KindTravel,
			Description: "flights: title like \"SFO → JFK\", subtitle with airline and number, rows Depart/Arrive/Duration/Stops, price, chips.",
			Layout:      Layout{Label: "Flights", Icon: "✈️", Color: 0x3A86FF, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 10, InlineRows: true, Parts: []string{PartSubtitle, PartPrice, PartChips, PartCallouts}},
		},
		{
			Name: "email", Kind: KindMessage,
			Description: "one drafted email: title is the subject, rows To/Cc/Bcc, the body in sections. The Send and Save draft buttons send exactly what the card shows.",
			Layout:      Layout{Label: "Email draft", Icon: "✉️", Color: 0x6C757D, Style: StyleDetail, Image: ImageNone, MaxItems: 1, Parts: []string{PartSubtitle, PartSections, PartCallouts}},
			Actions: []ActionSpec{
				{Action: Action{ID: "send", Label: "Send", Style: StylePrimary, Kind: ActionTool, Tool: ToolSendEmail}, Auto: true, ArgsFrom: emailArgs},
				{Action: Action{ID: "save_draft", Label: "Save draft", Kind: ActionTool, Tool: ToolSaveEmailDraft}, Auto: true, ArgsFrom: emailArgs},
			},
		},
		{
			Name: "stock_quote", Kind: KindFinance,
			Description: "quotes: title is the ticker, subtitle the company, price, changes (1D, YTD), a sparkline of recent closes, rows such as Volume.",
			Layout:      Layout{Label: "Quotes", Icon: "📈", Color: 0x2A9D8F, Style: StyleDetail, Image: ImageNone, MaxItems: 10, InlineRows: true, Parts: []string{PartPrice, PartChanges, PartSparkline, PartSubtitle, PartCallouts}, SparklineImage: true, ChangeColor: true},
		},
		{
			Name: "job_listing", Kind: KindJob,
			Description: "job listings: company logo, subtitle with company and place, salary as price (unit year), rows, chips such as Remote.",
			Layout:      Layout{Label: "Jobs", Icon: "💼", Color: 0x8338EC, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 10, InlineRows: true, Parts: []string{PartSubtitle, PartPrice, PartChips, PartSections, PartCallouts}},
		},
		{
			Name: "recipe", Kind: KindRecipe,
			Description: "recipes: large image, rating, rows Time/Serves, sections Ingredients and Method, chips such as Vegetarian.",
			Layout:      Layout{Label: "Recipes", Icon: "🍳", Color: 0xF4A261, Style: StyleDetail, Image: ImageLarge, MaxItems: 3, InlineRows: true, Parts: []string{PartSubtitle, PartRating, PartChips, PartSections, PartCallouts}},
		},
		{
			Name: "briefing", Kind: KindBriefing,
			Description: "a report: one item per topic with callouts for what needs attention and sections of text.",
			Layout:      Layout{Label: "Briefing", Icon: "📋", Color: 0x264653, Style: StyleDetail, Image: ImageNone, MaxItems: 10, Parts: []string{PartSubtitle, PartCallouts, PartSections, PartChanges, PartSparkline, PartChips}},
		},
		{
			Name: "news", Kind: KindNews,
			Description: "headlines: one line each with link, subtitle for the source, chips for topics.",
			Layout:      Layout{Label: "News", Icon: "📰", Color: 0xE76F51, Style: StyleList, Image: ImageNone, MaxItems: 15, Parts: []string{PartSubtitle, PartChips}},
		},
		{
			Name: "weather", Kind: KindWeather,
			Description: "forecast: one item per day or place, subtitle for conditions, rows High/Low/Wind, a sparkline of temperatures, callouts for alerts.",
			Layout:      Layout{Label: "Weather", Icon: "🌤️", Color: 0x4CC9F0, Style: StyleDetail, Image: ImageThumbnail, MaxItems: 7, InlineRows: true, Parts: []string{PartSubtitle, PartCallouts, PartSparkline, PartChanges, PartChips}, SparklineImage: true},
		},
		{
			Name: "calendar_event", Kind: KindEvent,
			Description: "events: title, subtitle for the time, rows When/Where/Who, link to the event, callouts for conflicts.",
			Layout:      Layout{Label: "Events", Icon: "📅", Color: 0x7209B7, Style: StyleDetail, Image: ImageNone, MaxItems: 10, Parts: []string{PartSubtitle, PartCallouts, PartSections, PartChips}},
		},
		{
			Name: "task_list", Kind: KindTasks,
			Description: "to-do list: one line per task with done true/false, subtitle for the due date, chips for tags.",
			Layout:      Layout{Label: "Tasks", Icon: "✅", Color: 0x06D6A0, Style: StyleList, Image: ImageNone, MaxItems: 50, Parts: []string{PartSubtitle, PartChips}},
		},
	}
	ts = append(ts, genericTemplate())
	for _, kind := range Kinds {
		l, ok := kindDefaults[kind]
		if !ok {
			continue
		}
		ts = append(ts, &Template{
			Name: DefaultPrefix + kind, Kind: kind, Layout: l,
			Description: fmt.Sprintf("the default layout for kind %s.", kind),
		})
	}
	return ts
}

// DefaultLibrary returns a new library holding the platform's curated
// templates: hotel, flight, email, stock_quote, job_listing, recipe,
// briefing, news, weather, calendar_event, task_list, a default per kind
// and the generic default. Each call returns a fresh library that the caller
// may change.
func DefaultLibrary() *Library {
	l, err := NewLibrary(builtinTemplates()...)
	if err != nil {
		// The built-in templates are checked by the tests; this cannot
		// happen in a released binary.
		panic(fmt.Sprintf("cards: built-in templates are invalid: %v", err))
	}
	return l
}
