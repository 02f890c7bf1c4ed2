package discordcard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core/cards"
)

// CheckLimits checks a create-message payload ({"embeds", "components"})
// and the names of the files sent with it against Discord's documented
// limits. It reads the JSON, not Go values, so it checks exactly what would
// go on the wire, and returns every violation found, joined.
func CheckLimits(payload []byte, fileNames []string) error {
	var msg struct {
		Content    string            `json:"content"`
		Embeds     []json.RawMessage `json:"embeds"`
		Components []json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(payload, &msg); err != nil {
		return fmt.Errorf("reading discord payload: %w", err)
	}
	var c checker
	c.max("content", msg.Content, 2000)
	if len(msg.Embeds) > MaxEmbeds {
		c.fail("embeds", "%d embeds, at most %d", len(msg.Embeds), MaxEmbeds)
	}
	if len(fileNames) > MaxAttachments {
		c.fail("files", "%d files, at most %d", len(fileNames), MaxAttachments)
	}
	total := 0
	for i, raw := range msg.Embeds {
		total += c.embed(fmt.Sprintf("embeds[%d]", i), raw, fileNames)
	}
	if total > MaxEmbedTotal {
		c.fail("embeds", "%d characters in all, at most %d", total, MaxEmbedTotal)
	}
	if len(msg.Components) > MaxActionRows {
		c.fail("components", "%d rows, at most %d", len(msg.Components), MaxActionRows)
	}
	ids := map[string]bool{}
	for i, raw := range msg.Components {
		c.row(fmt.Sprintf("components[%d]", i), raw, ids)
	}
	return errors.Join(c.errs...)
}

type checker struct{ errs []error }

func (c *checker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

func (c *checker) max(path, s string, max int) int {
	n := cards.Len(s)
	if n > max {
		c.fail(path, "%d characters, at most %d", n, max)
	}
	return n
}

func (c *checker) url(path, u string, files []string) {
	if name, ok := strings.CutPrefix(u, "attachment://"); ok {
		for _, f := range files {
			if f == name {
				return
			}
		}
		c.fail(path, "refers to attachment %q, which is not sent", name)
		return
	}
	if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		c.fail(path, "not an http(s) or attachment URL: %q", u)
	}
}

// embed checks one embed and returns the characters it counts towards the
// message total.
func (c *checker) embed(path string, raw json.RawMessage, files []string) int {
	var e struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		URL         string `json:"url"`
		Color       int    `json:"color"`
		Footer      *struct {
			Text string `json:"text"`
		} `json:"footer"`
		Author *struct {
			Name string `json:"name"`
		} `json:"author"`
		Image *struct {
			URL string `json:"url"`
		} `json:"image"`
		Thumbnail *struct {
			URL string `json:"url"`
		} `json:"thumbnail"`
		Fields []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		c.fail(path, "not an embed: %v", err)
		return 0
	}
	n := c.max(path+".title", e.Title, MaxTitle)
	n += c.max(path+".description", e.Description, MaxDescription)
	if e.Footer != nil {
		n += c.max(path+".footer.text", e.Footer.Text, MaxFooter)
	}
	if e.Author != nil {
		if e.Author.Name == "" {
			c.fail(path+".author.name", "required")
		}
		n += c.max(path+".author.name", e.Author.Name, MaxAuthor)
	}
	if len(e.Fields) > MaxFields {
		c.fail(path+".fields", "%d fields, at most %d", len(e.Fields), MaxFields)
	}
	for i, f := range e.Fields {
		fp := fmt.Sprintf("%s.fields[%d]", path, i)
		if f.Name == "" || f.Value == "" {
			c.fail(fp, "name and value are required")
		}
		n += c.max(fp+".name", f.Name, MaxFieldName)
		n += c.max(fp+".value", f.Value, MaxFieldValue)
	}
	if e.Color < 0 || e.Color > 0xFFFFFF {
		c.fail(path+".color", "%d is not a 24-bit colour", e.Color)
	}
	c.url(path+".url", e.URL, files)
	if e.Image != nil {
		c.url(path+".image.url", e.Image.URL, files)
	}
	if e.Thumbnail != nil {
		c.url(path+".thumbnail.url", e.Thumbnail.URL, files)
	}
	if n == 0 && e.Image == nil && e.Thumbnail == nil {
		c.fail(path, "empty embed")
	}
	return n
}

func (c *checker) row(path string, raw json.RawMessage, ids map[string]bool) {
	var r struct {
		Type       int `json:"type"`
		Components []struct {
			Type     int    `json:"type"`
			Label    string `json:"label"`
			Style    int    `json:"style"`
			CustomID string `json:"custom_id"`
			URL      string `json:"url"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		c.fail(path, "not a component: %v", err)
		return
	}
	if r.Type != 1 {
		c.fail(path+".type", "%d, want 1 (action row)", r.Type)
	}
	if len(r.Components) == 0 || len(r.Components) > MaxButtonsPerRow {
		c.fail(path+".components", "%d buttons, want 1 to %d", len(r.Components), MaxButtonsPerRow)
	}
	for i, b := range r.Components {
		bp := fmt.Sprintf("%s.components[%d]", path, i)
		if b.Type != 2 {
			c.fail(bp+".type", "%d, want 2 (button)", b.Type)
			continue
		}
		if b.Label == "" {
			c.fail(bp+".label", "required")
		}
		c.max(bp+".label", b.Label, MaxButtonLabel)
		switch {
		case b.Style == 5:
			if b.URL == "" || b.CustomID != "" {
				c.fail(bp, "a link button needs a url and no custom_id")
			}
		case b.Style >= 1 && b.Style <= 4:
			if b.CustomID == "" {
				c.fail(bp+".custom_id", "required")
			}
			c.max(bp+".custom_id", b.CustomID, MaxCustomID)
			if ids[b.CustomID] {
				c.fail(bp+".custom_id", "duplicate %q", b.CustomID)
			}
			ids[b.CustomID] = true
		default:
			c.fail(bp+".style", "unknown style %d", b.Style)
		}
	}
}
