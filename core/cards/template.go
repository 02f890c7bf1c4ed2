package cards

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Layout styles.
const (
	// StyleDetail gives each item its own block group (Slack) or embed
	// (Discord), with fields, image and text.
	StyleDetail = "detail"
	// StyleList gives each item one line; for headlines and to-do lists.
	StyleList = "list"
)

// Image placements.
const (
	ImageThumbnail = "thumbnail" // beside the item's text
	ImageLarge     = "large"     // under the item's text, full width
	ImageNone      = "none"      // not shown
)

// Parts of an item's body, besides its title (always first), its rows (shown
// as fields) and its image (placed by Layout.Image).
const (
	PartSubtitle  = "subtitle"
	PartPrice     = "price"
	PartRating    = "rating"
	PartChanges   = "changes"
	PartSparkline = "sparkline"
	PartChips     = "chips"
	PartCallouts  = "callouts"
	PartSections  = "sections"
)

// standardParts is the order of parts a layout does not name.
var standardParts = []string{
	PartSubtitle, PartPrice, PartRating, PartChanges, PartSparkline,
	PartCallouts, PartSections, PartChips,
}

// Layout is a resolved template: everything a renderer needs to draw a card,
// copied into the card when it is stamped.
type Layout struct {
	Name  string `json:"name"`  // the template it came from
	Kind  string `json:"kind"`  // the kind of result it is for
	Label string `json:"label"` // what a card of this layout is called ("Hotels")
	Icon  string `json:"icon,omitempty"`
	Color int    `json:"color,omitempty"` // accent, 0xRRGGBB
	Style string `json:"style"`           // StyleDetail or StyleList
	Image string `json:"image"`           // ImageThumbnail, ImageLarge or ImageNone
	// Parts orders an item's body. Parts it does not name still show, after
	// the named ones, in the standard order: a template decides emphasis,
	// never what the user is allowed to see.
	Parts []string `json:"parts,omitempty"`
	// MaxItems is how many items are drawn; the rest are counted in a
	// "+N more" line.
	MaxItems int `json:"max_items"`
	// InlineRows sets rows side by side (two columns) instead of stacked.
	InlineRows bool `json:"inline_rows,omitempty"`
	// SparklineImage asks for a server-rendered image of the sparkline
	// where the platform can show one, besides the text sparkline.
	SparklineImage bool `json:"sparkline_image,omitempty"`
	// ChangeColor colours the item by its first change (green up, red down).
	ChangeColor bool `json:"change_color,omitempty"`
}

// Colours used by ChangeColor.
const (
	ColorUp   = 0x2EB67D
	ColorDown = 0xE01E5A
)

// maxShown caps MaxItems: Discord shows at most ten embeds and Slack fifty
// blocks, so more detail items would only be cut by the renderer.
const (
	maxShownDetail = 10
	maxShownList   = 50
)

// Normalized returns the layout with every field usable: unknown values are
// replaced by the generic defaults and every part is listed. Renderers draw
// from the normalised layout, so a damaged or older stamp still draws.
func (l Layout) Normalized() Layout {
	g := genericLayout()
	if l.Label == "" {
		// A layout without a label is damaged; draw it as the generic one.
		l.Label = g.Label
		if l.Icon == "" {
			l.Icon = g.Icon
		}
	}
	if l.Kind == "" || !slices.Contains(Kinds, l.Kind) {
		l.Kind = KindGeneric
	}
	if l.Style != StyleDetail && l.Style != StyleList {
		l.Style = StyleDetail
	}
	switch l.Image {
	case ImageThumbnail, ImageLarge, ImageNone:
	default:
		l.Image = ImageThumbnail
	}
	if l.Color < 0 || l.Color > 0xFFFFFF {
		l.Color = g.Color
	}
	limit := maxShownDetail
	if l.Style == StyleList {
		limit = maxShownList
	}
	if l.MaxItems <= 0 || l.MaxItems > limit {
		l.MaxItems = limit
	}
	parts := make([]string, 0, len(standardParts))
	for _, p := range l.Parts {
		if slices.Contains(standardParts, p) && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	for _, p := range standardParts {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	l.Parts = parts
	return l
}

// ActionSpec is an action a template declares, such as an email's Send.
type ActionSpec struct {
	Action
	// Auto adds the action to every card of the template, even when the
	// result does not mention it.
	Auto bool `json:"auto,omitempty"`
	// ArgsFrom builds tool arguments from what the card shows, so the
	// button does what the user sees: argument name → a field of the first
	// item: "title", "subtitle", "link", "body" (its sections' text) or
	// "row:<label>". These win over arguments the model supplied.
	ArgsFrom map[string]string `json:"args_from,omitempty"`
}

// Template is a named layout with its declared actions.
type Template struct {
	Name        string
	Kind        string
	Description string // one line, for the model and the README
	Layout      Layout
	Actions     []ActionSpec
}

func (t *Template) clone() *Template {
	c := *t
	c.Layout.Parts = slices.Clone(t.Layout.Parts)
	c.Actions = make([]ActionSpec, len(t.Actions))
	for i, a := range t.Actions {
		a.Args = slices.Clone(a.Args)
		if a.ArgsFrom != nil {
			m := make(map[string]string, len(a.ArgsFrom))
			for k, v := range a.ArgsFrom {
				m[k] = v
			}
			a.ArgsFrom = m
		}
		c.Actions[i] = a
	}
	return &c
}

// DefaultName is the name of the generic default template, and
// DefaultPrefix+kind the name of a kind's default.
const (
	DefaultName   = "default"
	DefaultPrefix = "default_"
)

// Library holds templates by name. It is safe for concurrent use.
type Library struct {
	mu        sync.RWMutex
	templates map[string]*Template
}

// NewLibrary returns a library holding the given templates.
func NewLibrary(ts ...*Template) (*Library, error) {
	l := &Library{templates: make(map[string]*Template, len(ts))}
	for _, t := range ts {
		if err := l.Put(t); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Put adds or replaces a template. Cards already stamped keep the layout
// they were stamped with.
func (l *Library) Put(t *Template) error {
	if t == nil {
		return fmt.Errorf("putting template: nil template")
	}
	if len(t.Name) > MaxTemplateName || !templatePattern.MatchString(t.Name) {
		return fmt.Errorf("putting template %q: name must be lowercase letters, digits and _, at most %d", t.Name, MaxTemplateName)
	}
	if !slices.Contains(Kinds, t.Kind) {
		return fmt.Errorf("putting template %q: kind %q is not one of %s", t.Name, t.Kind, strings.Join(Kinds, ", "))
	}
	acts := make([]Action, len(t.Actions))
	for i, a := range t.Actions {
		acts[i] = a.Action
		for arg, ref := range a.ArgsFrom {
			if !validFieldRef(ref) {
				return fmt.Errorf("putting template %q: actions[%d].args_from[%q]: unknown field %q", t.Name, i, arg, ref)
			}
		}
	}
	var p problems
	validateActions(&p, acts, true)
	if err := p.result(); err != nil {
		return fmt.Errorf("putting template %q: %w", t.Name, err)
	}
	c := t.clone()
	c.Layout.Name, c.Layout.Kind = c.Name, c.Kind
	l.mu.Lock()
	defer l.mu.Unlock()
	l.templates[t.Name] = c
	return nil
}

// Remove deletes a template and reports whether it was there.
func (l *Library) Remove(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.templates[name]
	delete(l.templates, name)
	return ok
}

// Get returns a copy of the named template.
func (l *Library) Get(name string) (*Template, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	t, ok := l.templates[name]
	if !ok {
		return nil, false
	}
	return t.clone(), true
}

// Default returns the default template for a kind: the library's
// "default_<kind>", else its "default", else the built-in generic layout,
// which cannot be removed. It never returns nil.
func (l *Library) Default(kind string) *Template {
	if t, ok := l.Get(DefaultPrefix + kind); ok {
		return t
	}
	if t, ok := l.Get(DefaultName); ok {
		return t
	}
	return genericTemplate()
}

// Names lists the templates in alphabetical order.
func (l *Library) Names() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	names := make([]string, 0, len(l.templates))
	for n := range l.templates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Describe lists the named templates (not the kind defaults) for a tool
// description: "hotel (lodging): ...".
func (l *Library) Describe() string {
	var b strings.Builder
	for _, n := range l.Names() {
		if n == DefaultName || strings.HasPrefix(n, DefaultPrefix) {
			continue
		}
		t, ok := l.Get(n)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "- %s (kind %s): %s", t.Name, t.Kind, t.Description)
		var acts []string
		for _, a := range t.Actions {
			if a.Auto {
				acts = append(acts, a.ID)
			}
		}
		if len(acts) > 0 {
			fmt.Fprintf(&b, " Buttons added for you: %s.", strings.Join(acts, ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func validFieldRef(ref string) bool {
	switch ref {
	case "title", "subtitle", "link", "body":
		return true
	}
	label, ok := strings.CutPrefix(ref, "row:")
	return ok && label != ""
}

// fieldValue reads a field reference from an item.
func fieldValue(it *Item, ref string) string {
	switch ref {
	case "title":
		return it.Title
	case "subtitle":
		return it.Subtitle
	case "link":
		return it.Link
	case "body":
		texts := make([]string, 0, len(it.Sections))
		for _, s := range it.Sections {
			texts = append(texts, s.Text)
		}
		return strings.Join(texts, "\n\n")
	}
	if label, ok := strings.CutPrefix(ref, "row:"); ok {
		for _, r := range it.Rows {
			if strings.EqualFold(strings.TrimSpace(r.Label), label) {
				return r.Value
			}
		}
	}
	return ""
}

// mergeArgs lays the arguments derived from the card over the model's.
func mergeArgs(base json.RawMessage, it *Item, from map[string]string) (json.RawMessage, error) {
	if len(from) == 0 {
		return base, nil
	}
	args := map[string]any{}
	if len(base) > 0 && string(base) != "null" {
		if err := json.Unmarshal(base, &args); err != nil {
			return nil, fmt.Errorf("reading args: %w", err)
		}
	}
	for name, ref := range from {
		if v := fieldValue(it, ref); v != "" {
			args[name] = v
		}
	}
	out, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("writing args: %w", err)
	}
	return out, nil
}
