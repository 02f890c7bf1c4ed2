package cards

import "encoding/json"

// Kinds of result. The kind picks the fallback layout when a template is
// unknown, so an agent should always set the one closest to its data.
const (
	KindLodging  = "lodging"  // hotels, rentals
	KindTravel   = "travel"   // flights, trains
	KindMessage  = "message"  // a drafted email or message
	KindFinance  = "finance"  // quotes, prices over time
	KindJob      = "job"      // job listings
	KindRecipe   = "recipe"   // recipes
	KindBriefing = "briefing" // a report in sections with callouts
	KindNews     = "news"     // headlines
	KindWeather  = "weather"  // forecasts
	KindEvent    = "event"    // calendar events
	KindTasks    = "tasks"    // to-do lists
	KindGeneric  = "generic"  // anything else
)

// Kinds lists every kind in a stable order.
var Kinds = []string{
	KindLodging, KindTravel, KindMessage, KindFinance, KindJob, KindRecipe,
	KindBriefing, KindNews, KindWeather, KindEvent, KindTasks, KindGeneric,
}

// Callout levels.
const (
	LevelInfo    = "info"
	LevelSuccess = "success"
	LevelWarning = "warning"
	LevelError   = "error"
)

// Change directions.
const (
	DirectionUp   = "up"
	DirectionDown = "down"
	DirectionFlat = "flat"
)

// Action kinds.
const (
	// ActionTool runs a declared tool through the permission guard.
	ActionTool = "tool"
	// ActionSignal hands the click back to the agent as an action entry that
	// starts a turn.
	ActionSignal = "signal"
)

// Button styles.
const (
	StyleDefault = ""
	StylePrimary = "primary"
	StyleDanger  = "danger"
)

// Result is a structured answer an agent posts: the input of the post_result
// tool. Its JSON Schema (InputSchema) is what the model is told.
type Result struct {
	Kind     string   `json:"kind,omitempty" jsonschema:"what the items are: lodging, travel, message, finance, job, recipe, briefing, news, weather, event, tasks or generic; picks the fallback layout"`
	Template string   `json:"template,omitempty" jsonschema:"name of a layout from the template library (e.g. hotel, flight, email, stock_quote); an unknown name falls back to the default layout for the kind"`
	Title    string   `json:"title,omitempty" jsonschema:"heading of the whole card"`
	Summary  string   `json:"summary,omitempty" jsonschema:"one or two sentences shown under the heading (Markdown)"`
	Items    []Item   `json:"items" jsonschema:"the results, most relevant first"`
	Actions  []Action `json:"actions,omitempty" jsonschema:"buttons under the card"`
}

// Item is one result: a hotel, a flight, a quote, a section of a briefing.
// Only Title is required; a layout shows whatever else is present.
type Item struct {
	Title     string     `json:"title" jsonschema:"name of the item"`
	Subtitle  string     `json:"subtitle,omitempty" jsonschema:"one line under the title"`
	Link      string     `json:"link,omitempty" jsonschema:"http(s) URL the title links to"`
	Image     string     `json:"image,omitempty" jsonschema:"https URL of a picture"`
	ImageAlt  string     `json:"image_alt,omitempty" jsonschema:"what the picture shows, for screen readers"`
	Price     *Price     `json:"price,omitempty"`
	Rating    *Rating    `json:"rating,omitempty"`
	Rows      []Row      `json:"rows,omitempty" jsonschema:"labelled facts shown as fields (Depart: 09:10)"`
	Chips     []string   `json:"chips,omitempty" jsonschema:"short tags (Free wifi, Nonstop)"`
	Callouts  []Callout  `json:"callouts,omitempty" jsonschema:"highlighted notes"`
	Sections  []Section  `json:"sections,omitempty" jsonschema:"paragraphs of Markdown text, each with an optional heading"`
	Changes   []Change   `json:"changes,omitempty" jsonschema:"change indicators (up 1.2% today)"`
	Sparkline *Sparkline `json:"sparkline,omitempty"`
	Done      *bool      `json:"done,omitempty" jsonschema:"for a task: whether it is done"`
}

// Price is an amount of money.
type Price struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency" jsonschema:"ISO 4217 code, e.g. USD, EUR, JPY"`
	Unit     string  `json:"unit,omitempty" jsonschema:"what the price is per (night, person, share)"`
}

// Rating is a score out of Max (5 when unset).
type Rating struct {
	Value float64 `json:"value"`
	Max   float64 `json:"max,omitempty" jsonschema:"best possible score; 5 when unset"`
	Count int     `json:"count,omitempty" jsonschema:"how many reviews"`
}

// Row is one labelled fact.
type Row struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Callout is a highlighted note.
type Callout struct {
	Level string `json:"level" jsonschema:"info, success, warning or error"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
}

// Section is a block of formatted text.
type Section struct {
	Title string `json:"title,omitempty"`
	Text  string `json:"text" jsonschema:"Markdown: **bold**, _italic_, [links](https://...), lists"`
}

// Change is a movement up or down.
type Change struct {
	Direction string  `json:"direction" jsonschema:"up, down or flat"`
	Percent   float64 `json:"percent" jsonschema:"size of the change in percent; its sign, if any, must agree with direction"`
	Label     string  `json:"label,omitempty" jsonschema:"period or subject of the change (1D, YTD, vs last week)"`
}

// Sparkline is a small series drawn as a line.
type Sparkline struct {
	Values []float64 `json:"values" jsonschema:"at least two points, oldest first"`
	Label  string    `json:"label,omitempty" jsonschema:"what the series covers (5 days)"`
}

// Action is a button under a card. A tool action runs Tool with Args through
// the permission guard when clicked; a signal action hands the click back to
// the agent. The arguments never travel through the platform: the click
// names the card's entry and the action id, and Args are read from the entry.
type Action struct {
	ID    string          `json:"id" jsonschema:"lowercase identifier, unique in the card, at most 32 characters: a-z 0-9 _ -"`
	Label string          `json:"label,omitempty" jsonschema:"button text; may be omitted for an action the template declares"`
	Style string          `json:"style,omitempty" jsonschema:"primary, danger or empty"`
	Kind  string          `json:"kind,omitempty" jsonschema:"tool (runs Tool with Args after the permission check) or signal (tells you the button was clicked)"`
	Tool  string          `json:"tool,omitempty" jsonschema:"for kind tool: the tool to run"`
	Args  json.RawMessage `json:"args,omitempty" jsonschema:"for kind tool: the tool's arguments, a JSON object"`
	// Form, when set, makes the button open a form: what the person
	// submits goes back to you as one object keyed by input name (kind
	// signal) or is added to Args (kind tool).
	Form *Form `json:"form,omitempty" jsonschema:"questions the button opens as a form; the answers come back to you (signal) or are added to the tool's args (tool)"`
}
