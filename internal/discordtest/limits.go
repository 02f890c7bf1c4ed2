package discordtest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// Embed limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits)
// and Components V2 limits (https://discord.com/developers/docs/components/reference),
// checked on every message the fake accepts.
const (
	MaxEmbedTitle       = 256
	MaxEmbedDescription = 4096
	MaxEmbedFields      = 25
	MaxEmbedFieldName   = 256
	MaxEmbedFieldValue  = 1024
	MaxEmbedFooter      = 2048
	MaxEmbedAuthor      = 256
	MaxEmbedTotal       = 6000
	MaxV2Components     = 40
	MaxV2Text           = 4000
	// FlagComponentsV2 is IS_COMPONENTS_V2 (1<<15).
	FlagComponentsV2 = int(discordgo.MessageFlagsIsComponentsV2)
)

// formError is one field Discord refuses, answered as 50035 Invalid Form
// Body with the field's path in "errors", the shape Discord uses:
// {"code":50035,"message":"Invalid Form Body","errors":{"embeds":{"0":{"title":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH","message":"…"}]}}}}}.
type formError struct {
	path    string // dotted: embeds.0.title
	code    string
	message string
}

func invalid(path, code, format string, args ...any) *formError {
	return &formError{path: path, code: code, message: fmt.Sprintf(format, args...)}
}

func tooLong(path string, max int) *formError {
	return invalid(path, "BASE_TYPE_MAX_LENGTH", "Must be %d or fewer in length.", max)
}

// body is the JSON error Discord answers with.
func (e *formError) body() map[string]any {
	leaf := map[string]any{"_errors": []map[string]string{{"code": e.code, "message": e.message}}}
	keys := strings.Split(e.path, ".")
	for i := len(keys) - 1; i >= 0; i-- {
		leaf = map[string]any{keys[i]: leaf}
	}
	return map[string]any{"code": 50035, "message": "Invalid Form Body", "errors": leaf}
}

func runes(s string) int { return len([]rune(s)) }

// checkEmbeds holds embeds to Discord's per-field limits and the 6,000
// characters they may hold together.
func checkEmbeds(raw json.RawMessage) *formError {
	var embeds []struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		Footer      *struct {
			Text string `json:"text"`
		} `json:"footer"`
		Author *struct {
			Name string `json:"name"`
		} `json:"author"`
		Fields []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(raw, &embeds); err != nil {
		return invalid("embeds", "BASE_TYPE_ARRAY", "Must be an array.")
	}
	if len(embeds) > MaxEmbeds {
		return tooLong("embeds", MaxEmbeds)
	}
	total := 0
	for i, e := range embeds {
		p := "embeds." + strconv.Itoa(i)
		if runes(e.Title) > MaxEmbedTitle {
			return tooLong(p+".title", MaxEmbedTitle)
		}
		if runes(e.Description) > MaxEmbedDescription {
			return tooLong(p+".description", MaxEmbedDescription)
		}
		total += runes(e.Title) + runes(e.Description)
		if e.Footer != nil {
			if runes(e.Footer.Text) > MaxEmbedFooter {
				return tooLong(p+".footer.text", MaxEmbedFooter)
			}
			total += runes(e.Footer.Text)
		}
		if e.Author != nil {
			if runes(e.Author.Name) > MaxEmbedAuthor {
				return tooLong(p+".author.name", MaxEmbedAuthor)
			}
			total += runes(e.Author.Name)
		}
		if len(e.Fields) > MaxEmbedFields {
			return tooLong(p+".fields", MaxEmbedFields)
		}
		for j, f := range e.Fields {
			fp := p + ".fields." + strconv.Itoa(j)
			if f.Name == "" {
				return invalid(fp+".name", "BASE_TYPE_REQUIRED", "This field is required")
			}
			if f.Value == "" {
				return invalid(fp+".value", "BASE_TYPE_REQUIRED", "This field is required")
			}
			if runes(f.Name) > MaxEmbedFieldName {
				return tooLong(fp+".name", MaxEmbedFieldName)
			}
			if runes(f.Value) > MaxEmbedFieldValue {
				return tooLong(fp+".value", MaxEmbedFieldValue)
			}
			total += runes(f.Name) + runes(f.Value)
		}
	}
	if total > MaxEmbedTotal {
		return invalid("embeds", "MESSAGE_EMBEDS_TOO_LARGE", "Embed size exceeds maximum size of %d", MaxEmbedTotal)
	}
	return nil
}

// component is any component as it travels, the fields of every type.
type component struct {
	Type       int               `json:"type"`
	Components []json.RawMessage `json:"components"`
	Accessory  json.RawMessage   `json:"accessory"`
	Content    *string           `json:"content"`
	Items      []json.RawMessage `json:"items"`
	Media      *struct {
		URL string `json:"url"`
	} `json:"media"`
	CustomID string `json:"custom_id"`
	Label    string `json:"label"`
	Style    int    `json:"style"`
	URL      string `json:"url"`
	Disabled bool   `json:"disabled"`
}

// componentChecker walks a message's components, counting what Discord
// counts and holding each to its place.
type componentChecker struct {
	v2    bool
	count int
	text  int
	ids   map[string]bool
}

// checkComponents checks a message's components: legacy messages carry at
// most five action rows of buttons; a message flagged IS_COMPONENTS_V2
// carries layout and content components, 40 in all counting nested ones,
// with at most 4,000 characters of text display content.
func checkComponents(raw json.RawMessage, v2 bool) *formError {
	var top []json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return invalid("components", "BASE_TYPE_ARRAY", "Must be an array.")
	}
	if !v2 && len(top) > MaxActionRows {
		return tooLong("components", MaxActionRows)
	}
	c := &componentChecker{v2: v2, ids: map[string]bool{}}
	allowed := []int{int(discordgo.ActionsRowComponent)}
	if v2 {
		allowed = []int{1, 9, 10, 12, 13, 14, 17}
	}
	for i, r := range top {
		if e := c.check("components."+strconv.Itoa(i), r, allowed); e != nil {
			return e
		}
	}
	if v2 && c.count > MaxV2Components {
		return invalid("components", "BASE_TYPE_MAX_LENGTH", "Must be %d or fewer in length (nested components included, got %d).", MaxV2Components, c.count)
	}
	if v2 && c.text > MaxV2Text {
		return invalid("components", "BASE_TYPE_MAX_LENGTH", "Text display content must be %d or fewer in length in all (got %d).", MaxV2Text, c.text)
	}
	return nil
}

func (c *componentChecker) check(path string, raw json.RawMessage, allowed []int) *formError {
	var k component
	if err := json.Unmarshal(raw, &k); err != nil {
		return invalid(path, "BASE_TYPE_DICT", "Must be an object.")
	}
	c.count++
	ok := false
	for _, t := range allowed {
		ok = ok || k.Type == t
	}
	if !ok {
		if !c.v2 && k.Type != int(discordgo.ActionsRowComponent) {
			return invalid(path+".type", "COMPONENT_TYPE_INVALID", "Component type %d needs the IS_COMPONENTS_V2 flag", k.Type)
		}
		return invalid(path+".type", "COMPONENT_TYPE_INVALID", "Component type %d is not allowed here", k.Type)
	}
	switch k.Type {
	case int(discordgo.ActionsRowComponent):
		if len(k.Components) == 0 || len(k.Components) > MaxRowButtons {
			return invalid(path+".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and %d in length.", MaxRowButtons)
		}
		for j, b := range k.Components {
			if e := c.check(path+".components."+strconv.Itoa(j), b, []int{int(discordgo.ButtonComponent)}); e != nil {
				return e
			}
		}
	case int(discordgo.ButtonComponent):
		return c.button(path, k)
	case int(discordgo.ContainerComponent):
		if len(k.Components) == 0 {
			return invalid(path+".components", "BASE_TYPE_REQUIRED", "This field is required")
		}
		for j, cc := range k.Components {
			if e := c.check(path+".components."+strconv.Itoa(j), cc, []int{1, 9, 10, 12, 13, 14}); e != nil {
				return e
			}
		}
	case int(discordgo.SectionComponent):
		if len(k.Components) == 0 || len(k.Components) > 3 {
			return invalid(path+".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 3 in length.")
		}
		for j, cc := range k.Components {
			if e := c.check(path+".components."+strconv.Itoa(j), cc, []int{int(discordgo.TextDisplayComponent)}); e != nil {
				return e
			}
		}
		if !present(k.Accessory) {
			return invalid(path+".accessory", "BASE_TYPE_REQUIRED", "This field is required")
		}
		return c.check(path+".accessory", k.Accessory, []int{int(discordgo.ButtonComponent), int(discordgo.ThumbnailComponent)})
	case int(discordgo.TextDisplayComponent):
		if k.Content == nil || *k.Content == "" {
			return invalid(path+".content", "BASE_TYPE_REQUIRED", "This field is required")
		}
		c.text += runes(*k.Content)
	case int(discordgo.ThumbnailComponent):
		if k.Media == nil || k.Media.URL == "" {
			return invalid(path+".media.url", "BASE_TYPE_REQUIRED", "This field is required")
		}
	case int(discordgo.MediaGalleryComponent):
		if len(k.Items) == 0 || len(k.Items) > 10 {
			return invalid(path+".items", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 10 in length.")
		}
	}
	return nil
}

func (c *componentChecker) button(path string, b component) *formError {
	if runes(b.Label) > MaxLabelLen {
		return tooLong(path+".label", MaxLabelLen)
	}
	if b.Style == int(discordgo.LinkButton) {
		return nil
	}
	if b.CustomID == "" || runes(b.CustomID) > MaxCustomIDLen {
		return invalid(path+".custom_id", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and %d in length.", MaxCustomIDLen)
	}
	if c.ids[b.CustomID] {
		return invalid(path+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated")
	}
	c.ids[b.CustomID] = true
	return nil
}
