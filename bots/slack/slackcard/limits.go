package slackcard

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core/cards"
)

// CheckLimits checks a chat.postMessage payload ({"text", "blocks"}) against
// the limits Slack documents for the blocks a card uses. It reads the JSON,
// not Go values, so it checks exactly what would go on the wire. It returns
// every violation found, joined.
func CheckLimits(payload []byte) error {
	var msg struct {
		Text   string            `json:"text"`
		Blocks []json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(payload, &msg); err != nil {
		return fmt.Errorf("reading slack payload: %w", err)
	}
	var c checker
	c.max("text", msg.Text, slacklimit.MessageText)
	if len(msg.Blocks) > slacklimit.Blocks {
		c.fail("blocks", "%d blocks, at most %d", len(msg.Blocks), slacklimit.Blocks)
	}
	for i, raw := range msg.Blocks {
		c.block(fmt.Sprintf("blocks[%d]", i), raw)
	}
	return errors.Join(c.errs...)
}

type checker struct{ errs []error }

func (c *checker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

func (c *checker) max(path, s string, max int) {
	if n := cards.Len(s); n > max {
		c.fail(path, "%d characters, at most %d", n, max)
	}
}

type textObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (c *checker) text(path string, t *textObj, max int, plainOnly bool) {
	if t == nil {
		c.fail(path, "missing text object")
		return
	}
	switch t.Type {
	case "plain_text":
	case "mrkdwn":
		if plainOnly {
			c.fail(path+".type", "must be plain_text")
		}
	default:
		c.fail(path+".type", "unknown text type %q", t.Type)
	}
	if t.Text == "" {
		c.fail(path+".text", "empty")
	}
	c.max(path+".text", t.Text, max)
}

type element struct {
	Type     string   `json:"type"`
	Text     *textObj `json:"text"` // button
	ActionID string   `json:"action_id"`
	Value    string   `json:"value"`
	URL      string   `json:"url"`
	Style    string   `json:"style"`
	ImageURL *string  `json:"image_url"` // image
	AltText  *string  `json:"alt_text"`
}

func (c *checker) image(path string, url, alt *string) {
	if url == nil || *url == "" {
		c.fail(path+".image_url", "required")
	} else {
		c.max(path+".image_url", *url, slacklimit.ImageURL)
	}
	if alt == nil || *alt == "" {
		c.fail(path+".alt_text", "required")
	} else {
		c.max(path+".alt_text", *alt, slacklimit.ImageAltText)
	}
}

func (c *checker) block(path string, raw json.RawMessage) {
	var b struct {
		Type      string            `json:"type"`
		BlockID   string            `json:"block_id"`
		Text      *textObj          `json:"text"`
		Fields    []*textObj        `json:"fields"`
		Accessory *element          `json:"accessory"`
		Elements  []json.RawMessage `json:"elements"`
		ImageURL  *string           `json:"image_url"`
		AltText   *string           `json:"alt_text"`
		Title     *textObj          `json:"title"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		c.fail(path, "not a block: %v", err)
		return
	}
	c.max(path+".block_id", b.BlockID, slacklimit.BlockID)
	switch b.Type {
	case "header":
		c.text(path+".text", b.Text, slacklimit.HeaderText, true)
	case "section":
		if b.Text == nil && len(b.Fields) == 0 {
			c.fail(path, "a section needs text or fields")
		}
		if b.Text != nil {
			c.text(path+".text", b.Text, slacklimit.SectionText, false)
		}
		if len(b.Fields) > slacklimit.SectionFields {
			c.fail(path+".fields", "%d fields, at most %d", len(b.Fields), slacklimit.SectionFields)
		}
		for i, f := range b.Fields {
			c.text(fmt.Sprintf("%s.fields[%d]", path, i), f, slacklimit.FieldText, false)
		}
		if a := b.Accessory; a != nil {
			switch a.Type {
			case "image":
				c.image(path+".accessory", a.ImageURL, a.AltText)
			case "button":
				c.button(path+".accessory", a)
			default:
				c.fail(path+".accessory", "unexpected accessory %q", a.Type)
			}
		}
	case "context":
		if len(b.Elements) == 0 || len(b.Elements) > slacklimit.ContextElements {
			c.fail(path+".elements", "%d elements, want 1 to %d", len(b.Elements), slacklimit.ContextElements)
		}
		for i, raw := range b.Elements {
			ep := fmt.Sprintf("%s.elements[%d]", path, i)
			var e struct {
				textObj
				ImageURL *string `json:"image_url"`
				AltText  *string `json:"alt_text"`
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				c.fail(ep, "not an element: %v", err)
				continue
			}
			if e.Type == "image" {
				c.image(ep, e.ImageURL, e.AltText)
				continue
			}
			c.text(ep, &e.textObj, slacklimit.ContextText, false)
		}
	case "actions":
		if len(b.Elements) == 0 || len(b.Elements) > slacklimit.ActionsElements {
			c.fail(path+".elements", "%d elements, want 1 to %d", len(b.Elements), slacklimit.ActionsElements)
		}
		seen := map[string]bool{}
		for i, raw := range b.Elements {
			ep := fmt.Sprintf("%s.elements[%d]", path, i)
			var e element
			if err := json.Unmarshal(raw, &e); err != nil {
				c.fail(ep, "not an element: %v", err)
				continue
			}
			if e.Type != "button" {
				c.fail(ep, "unexpected element %q", e.Type)
				continue
			}
			c.button(ep, &e)
			if seen[e.ActionID] {
				c.fail(ep+".action_id", "duplicate %q in the block", e.ActionID)
			}
			seen[e.ActionID] = true
		}
	case "image":
		c.image(path, b.ImageURL, b.AltText)
		if b.Title != nil {
			c.text(path+".title", b.Title, slacklimit.ImageTitle, true)
		}
	case "divider":
	default:
		c.fail(path+".type", "unexpected block type %q", b.Type)
	}
}

func (c *checker) button(path string, e *element) {
	c.text(path+".text", e.Text, slacklimit.ButtonText, true)
	if e.ActionID == "" && e.URL == "" {
		c.fail(path+".action_id", "required")
	}
	c.max(path+".action_id", e.ActionID, slacklimit.ActionID)
	c.max(path+".value", e.Value, slacklimit.ButtonValue)
	c.max(path+".url", e.URL, slacklimit.ImageURL)
	switch e.Style {
	case "", "primary", "danger":
	default:
		c.fail(path+".style", "unknown style %q", e.Style)
	}
}
