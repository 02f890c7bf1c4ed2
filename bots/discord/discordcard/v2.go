package discordcard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core/cards"
)

// Components V2 limits (https://discord.com/developers/docs/components/reference):
// a message with the IS_COMPONENTS_V2 flag holds at most 40 components,
// nested ones included, and at most 4,000 characters of text display
// content in all. A section holds one to three text displays; a media
// gallery one to ten items.
const (
	MaxV2Components  = 40
	MaxV2Text        = 4000
	MaxSectionTexts  = 3
	MaxGalleryItems  = 10
	FlagComponentsV2 = discordgo.MessageFlagsIsComponentsV2
)

// ErrV2DoesNotFit is wrapped by RenderV2 when the card, drawn as Components
// V2, breaks Discord's limits; the caller then sends RenderEmbeds' embeds.
var ErrV2DoesNotFit = errors.New("card does not fit discord's components v2 limits")

// RenderV2 draws the card in Components V2: one container (accent colour of
// the layout) holding the heading, each item as a section (with its
// thumbnail as the accessory) or text display, a media gallery for a large
// picture or an attached sparkline, separators between items, the footer
// as small text, and the button rows. The message must be sent with
// FlagComponentsV2 and no content or embeds. It starts from the embeds
// Render draws, so both forms show the same text; a card whose V2 form
// breaks the limits (CheckV2) returns an error wrapping ErrV2DoesNotFit.
func RenderV2(s *cards.Stamped, opts Options) ([]discordgo.MessageComponent, []*discordgo.File, error) {
	embeds, rows, files, err := Render(s, opts)
	if err != nil {
		return nil, nil, err
	}
	var parts []discordgo.MessageComponent
	if len(embeds) > 0 && embeds[0].Author != nil && embeds[0].Author.Name != "" {
		parts = append(parts, discordgo.TextDisplay{Content: "### " + oneLine(embeds[0].Author.Name)})
	}
	for i, e := range embeds {
		if i > 0 {
			parts = append(parts, separator())
		}
		parts = append(parts, embedV2(e)...)
	}
	parts = append(parts, rows...)
	c := discordgo.Container{Components: parts}
	if len(embeds) > 0 && embeds[0].Color != 0 {
		color := embeds[0].Color
		c.AccentColor = &color
	}
	out := []discordgo.MessageComponent{c}
	if err := CheckV2(out); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrV2DoesNotFit, err)
	}
	return out, files, nil
}

func separator() discordgo.Separator {
	divider := true
	spacing := discordgo.SeparatorSpacingSizeSmall
	return discordgo.Separator{Divider: &divider, Spacing: &spacing}
}

// embedV2 turns one embed into V2 components: its title (a link when it
// has a URL), description and fields as one text display, beside its
// thumbnail in a section; its image as a gallery; its footer as small text.
func embedV2(e *discordgo.MessageEmbed) []discordgo.MessageComponent {
	var lines []string
	if t := strings.TrimSpace(e.Title); t != "" {
		t = "**" + escapeLinkText(t) + "**"
		if e.URL != "" {
			t = "[" + t + "](" + strings.ReplaceAll(e.URL, ")", "%29") + ")"
		}
		lines = append(lines, t)
	}
	if d := strings.TrimSpace(e.Description); d != "" {
		lines = append(lines, d)
	}
	for _, f := range e.Fields {
		lines = append(lines, "**"+strings.TrimSpace(f.Name)+":** "+f.Value)
	}
	var out []discordgo.MessageComponent
	text := discordgo.TextDisplay{Content: strings.Join(lines, "\n")}
	switch {
	case e.Thumbnail != nil && e.Thumbnail.URL != "":
		if text.Content == "" {
			text.Content = "\u200b"
		}
		out = append(out, discordgo.Section{
			Components: []discordgo.MessageComponent{text},
			Accessory:  discordgo.Thumbnail{Media: discordgo.UnfurledMediaItem{URL: e.Thumbnail.URL}},
		})
	case text.Content != "":
		out = append(out, text)
	}
	if e.Image != nil && e.Image.URL != "" {
		out = append(out, discordgo.MediaGallery{Items: []discordgo.MediaGalleryItem{{Media: discordgo.UnfurledMediaItem{URL: e.Image.URL}}}})
	}
	if e.Footer != nil && strings.TrimSpace(e.Footer.Text) != "" {
		out = append(out, discordgo.TextDisplay{Content: "-# " + oneLine(e.Footer.Text)})
	}
	return out
}

// CheckV2 checks Components V2 against the limits Discord enforces on the
// whole message: the number of components, nested ones included, and the
// characters of text display content. It returns every violation, joined.
func CheckV2(comps []discordgo.MessageComponent) error {
	var n, text int
	var errs []error
	var walk func(path string, c discordgo.MessageComponent)
	walk = func(path string, c discordgo.MessageComponent) {
		n++
		switch v := c.(type) {
		case discordgo.Container:
			for i, cc := range v.Components {
				walk(fmt.Sprintf("%s.components[%d]", path, i), cc)
			}
		case discordgo.Section:
			if len(v.Components) == 0 || len(v.Components) > MaxSectionTexts {
				errs = append(errs, fmt.Errorf("%s.components: %d text displays, want 1 to %d", path, len(v.Components), MaxSectionTexts))
			}
			for i, cc := range v.Components {
				walk(fmt.Sprintf("%s.components[%d]", path, i), cc)
			}
			if v.Accessory == nil {
				errs = append(errs, fmt.Errorf("%s.accessory: required", path))
			} else {
				walk(path+".accessory", v.Accessory)
			}
		case discordgo.ActionsRow:
			for i, cc := range v.Components {
				walk(fmt.Sprintf("%s.components[%d]", path, i), cc)
			}
		case discordgo.TextDisplay:
			text += cards.Len(v.Content)
		case discordgo.MediaGallery:
			if len(v.Items) == 0 || len(v.Items) > MaxGalleryItems {
				errs = append(errs, fmt.Errorf("%s.items: %d, want 1 to %d", path, len(v.Items), MaxGalleryItems))
			}
		}
	}
	for i, c := range comps {
		walk(fmt.Sprintf("components[%d]", i), c)
	}
	if n > MaxV2Components {
		errs = append(errs, fmt.Errorf("components: %d in all, nested ones included; at most %d", n, MaxV2Components))
	}
	if text > MaxV2Text {
		errs = append(errs, fmt.Errorf("components: %d characters of text display content; at most %d", text, MaxV2Text))
	}
	return errors.Join(errs...)
}
