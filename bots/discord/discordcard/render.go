// Package discordcard renders a stamped card (core/cards) as Discord embeds
// and button rows, always inside Discord's limits: text that does not fit is
// cut with an ellipsis, items that do not fit are counted in a "+N more"
// footer, and the 6,000-character budget of a message is shared out between
// its embeds. Nothing is rejected.
//
// A sparkline is drawn as Unicode block characters in the text. When the
// layout asks for a picture and Options.SparklineFunc is set, the renderer
// also returns a PNG to attach, shown as the embed's image through
// "attachment://<name>". The function is injected (headless/chart provides
// one) so core and this package never import the chart code.
package discordcard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
)

// Discord's documented limits, in characters (code points).
const (
	MaxEmbeds          = 10
	MaxEmbedTotal      = 6000
	MaxTitle           = 256
	MaxDescription     = 4096
	MaxFields          = 25
	MaxFieldName       = 256
	MaxFieldValue      = 1024
	MaxFooter          = 2048
	MaxAuthor          = 256
	MaxActionRows      = 5
	MaxButtonsPerRow   = 5
	MaxButtonLabel     = 80
	MaxCustomID        = 100
	MaxAttachments     = 10
	DefaultSparkWidth  = 480
	DefaultSparkHeight = 120
)

// maxListLine keeps one headline from filling a list card.
const maxListLine = 400

// SparklineFunc renders a series as a PNG of the given size.
type SparklineFunc func(values []float64, width, height int) ([]byte, error)

// Options configures Render.
type Options struct {
	// EntryID is the id of the card's entry. Buttons carry it in their
	// custom_id so a click can be routed back; it is required when the card
	// shows buttons.
	EntryID uuid.UUID
	// SparklineFunc, when set, draws sparklines as attached images for
	// layouts that ask for them. A failure is logged and the card keeps its
	// text sparkline.
	SparklineFunc SparklineFunc
	// SparklineWidth and SparklineHeight size the image; defaults 480×120.
	SparklineWidth, SparklineHeight int
	// Logger receives sparkline failures; default: discard.
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.SparklineWidth <= 0 {
		o.SparklineWidth = DefaultSparkWidth
	}
	if o.SparklineHeight <= 0 {
		o.SparklineHeight = DefaultSparkHeight
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o Options) validate(s *cards.Stamped) error {
	if s.Outcome == "" && len(s.Actions) > 0 && o.EntryID == uuid.Nil {
		return errors.New("options.EntryID: required to render a card with buttons")
	}
	return nil
}

// Render draws the card as embeds, button rows and files to attach. The
// components slice is empty, not nil, when there are no buttons (after a
// click), so that an edit sending it clears the old buttons.
func Render(s *cards.Stamped, opts Options) (embeds []*discordgo.MessageEmbed, components []discordgo.MessageComponent, files []*discordgo.File, err error) {
	if s == nil {
		return nil, nil, nil, errors.New("rendering card for discord: nil card")
	}
	if err := opts.validate(s); err != nil {
		return nil, nil, nil, fmt.Errorf("rendering card for discord: %w", err)
	}
	opts.defaults()
	l := s.Layout.Normalized()
	shown, hidden := s.Shown()

	if l.Style == cards.StyleList {
		var e *discordgo.MessageEmbed
		e, hidden = listEmbed(l, s.Summary, shown, hidden)
		embeds = []*discordgo.MessageEmbed{e}
	} else {
		if len(shown) > MaxEmbeds {
			hidden += len(shown) - MaxEmbeds
			shown = shown[:MaxEmbeds]
		}
		for i := range shown {
			e, f := detailEmbed(l, &shown[i], i, opts)
			embeds = append(embeds, e)
			if f != nil {
				files = append(files, f)
			}
		}
	}

	if len(embeds) == 0 {
		// Only a damaged card has no items; it still shows its heading.
		embeds = []*discordgo.MessageEmbed{{Type: discordgo.EmbedTypeRich, Color: l.Color}}
	}
	first := embeds[0]
	first.Author = &discordgo.MessageEmbedAuthor{Name: cards.Truncate(s.Heading(), MaxAuthor)}
	if s.Summary != "" && l.Style != cards.StyleList {
		first.Description = cards.Truncate(strings.TrimSpace(cards.Truncate(s.Summary, MaxDescription/4)+"\n\n"+first.Description), MaxDescription)
	}
	var foot []string
	if hidden > 0 {
		foot = append(foot, cards.MoreText(hidden))
	}
	if s.Outcome != "" {
		foot = append(foot, s.Outcome)
	}
	if len(foot) > 0 {
		last := embeds[len(embeds)-1]
		if last.Footer != nil {
			foot = append([]string{last.Footer.Text}, foot...)
		}
		last.Footer = &discordgo.MessageEmbedFooter{Text: cards.Truncate(strings.Join(foot, " · "), MaxFooter)}
	}
	fitTotal(embeds, MaxEmbedTotal)

	components = []discordgo.MessageComponent{}
	if s.Outcome == "" {
		components = buttons(s.Actions, opts.EntryID)
	}
	return embeds, components, files, nil
}

func detailEmbed(l cards.Layout, it *cards.Item, idx int, opts Options) (*discordgo.MessageEmbed, *discordgo.File) {
	e := &discordgo.MessageEmbed{
		Type:  discordgo.EmbedTypeRich,
		Title: cards.Truncate(taskPrefix(it.Done)+oneLine(cards.ItemTitle(it)), MaxTitle),
		URL:   webURL(it.Link),
		Color: cards.ItemColor(l, it),
	}
	var desc []string
	rowLine := func(r cards.Row) string { return "**" + oneLine(r.Label) + ":** " + r.Value }
	// Stacked rows read as a header (To, When) and open the description;
	// side-by-side rows are inline fields.
	if !l.InlineRows {
		for _, r := range it.Rows {
			desc = append(desc, rowLine(r))
		}
	}
	for _, part := range l.Parts {
		switch part {
		case cards.PartSubtitle:
			if it.Subtitle != "" {
				desc = append(desc, it.Subtitle)
			}
		case cards.PartPrice:
			if it.Price != nil {
				desc = append(desc, "**"+cards.FormatPrice(*it.Price)+"**")
			}
		case cards.PartRating:
			if it.Rating != nil {
				desc = append(desc, cards.RatingText(*it.Rating))
			}
		case cards.PartChanges:
			if len(it.Changes) > 0 {
				cs := make([]string, len(it.Changes))
				for i, c := range it.Changes {
					cs[i] = cards.ChangeText(c)
				}
				desc = append(desc, strings.Join(cs, "   "))
			}
		case cards.PartSparkline:
			if sp := it.Sparkline; sp != nil {
				if line := cards.SparklineText(sp.Values, cards.SparklineWidth); line != "" {
					desc = append(desc, strings.TrimSpace("`"+line+"` "+sp.Label))
				}
			}
		case cards.PartCallouts:
			for _, c := range it.Callouts {
				t := "> " + cards.CalloutIcon(c.Level) + " "
				if c.Title != "" {
					t += "**" + oneLine(c.Title) + "** "
				}
				desc = append(desc, t+strings.ReplaceAll(c.Text, "\n", "\n> "))
			}
		case cards.PartSections:
			for _, sec := range it.Sections {
				t := sec.Text
				if sec.Title != "" {
					t = "**" + oneLine(sec.Title) + "**\n" + t
				}
				desc = append(desc, t)
			}
		case cards.PartChips:
			if len(it.Chips) > 0 {
				cs := make([]string, len(it.Chips))
				for i, c := range it.Chips {
					cs[i] = "`" + strings.ReplaceAll(oneLine(c), "`", "'") + "`"
				}
				desc = append(desc, strings.Join(cs, " "))
			}
		}
	}
	if l.InlineRows {
		n := min(len(it.Rows), MaxFields)
		for _, r := range it.Rows[:n] {
			e.Fields = append(e.Fields, &discordgo.MessageEmbedField{
				Name:   nonEmpty(cards.Truncate(oneLine(r.Label), MaxFieldName)),
				Value:  nonEmpty(cards.Truncate(r.Value, MaxFieldValue)),
				Inline: true,
			})
		}
		for _, r := range it.Rows[n:] {
			desc = append(desc, rowLine(r))
		}
	}
	// Each piece is cut before joining so a huge item costs what is shown.
	size := 0
	for i, d := range desc {
		if size > MaxDescription {
			desc = desc[:i]
			break
		}
		desc[i] = cards.Truncate(d, MaxDescription)
		size += cards.Len(desc[i]) + 1
	}
	e.Description = cards.Truncate(strings.Join(desc, "\n"), MaxDescription)

	if webURL(it.Image) != "" {
		switch l.Image {
		case cards.ImageThumbnail:
			e.Thumbnail = &discordgo.MessageEmbedThumbnail{URL: it.Image}
		case cards.ImageLarge:
			e.Image = &discordgo.MessageEmbedImage{URL: it.Image}
		}
	}
	var file *discordgo.File
	if l.SparklineImage && opts.SparklineFunc != nil && it.Sparkline != nil && len(it.Sparkline.Values) >= 2 {
		png, err := opts.SparklineFunc(it.Sparkline.Values, opts.SparklineWidth, opts.SparklineHeight)
		switch {
		case err != nil:
			opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "sparkline image failed; keeping the text sparkline",
				slog.Int("item", idx), slog.String("error", err.Error()))
		case len(png) > 0:
			name := fmt.Sprintf("sparkline-%d.png", idx)
			file = &discordgo.File{Name: name, ContentType: "image/png", Reader: bytes.NewReader(png)}
			// The chart is the point of a quote; a large item picture
			// moves to the thumbnail to make room for it.
			if e.Image != nil && e.Thumbnail == nil {
				e.Thumbnail = &discordgo.MessageEmbedThumbnail{URL: e.Image.URL}
			}
			e.Image = &discordgo.MessageEmbedImage{URL: "attachment://" + name}
		}
	}
	return e, file
}

// listEmbed draws every item as one line of a single embed, as many as the
// description holds, and returns the count still hidden.
func listEmbed(l cards.Layout, summary string, items []cards.Item, hidden int) (*discordgo.MessageEmbed, int) {
	e := &discordgo.MessageEmbed{Type: discordgo.EmbedTypeRich, Color: l.Color}
	var b strings.Builder
	room := MaxDescription
	if summary = strings.TrimSpace(summary); summary != "" {
		b.WriteString(cards.Truncate(summary, MaxDescription/4) + "\n")
	}
	for i := range items {
		line := cards.Truncate(listLine(l, &items[i]), maxListLine)
		if cards.Len(b.String())+cards.Len(line)+1 > room {
			hidden += len(items) - i
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	e.Description = b.String()
	return e, hidden
}

func listLine(l cards.Layout, it *cards.Item) string {
	var b strings.Builder
	if box := cards.TaskBox(it.Done); box != "" {
		b.WriteString(box + " ")
	} else {
		b.WriteString("• ")
	}
	title := "**" + escapeLinkText(oneLine(cards.Truncate(cards.ItemTitle(it), 200))) + "**"
	if link := webURL(it.Link); link != "" {
		title = "[" + title + "](" + strings.ReplaceAll(link, ")", "%29") + ")"
	}
	b.WriteString(title)
	var extra []string
	size := 0
	add := func(s string) {
		if size <= maxListLine { // the line is cut to maxListLine anyway
			s = oneLine(cards.Truncate(s, maxListLine))
			extra = append(extra, s)
			size += cards.Len(s)
		}
	}
	for _, line := range cards.ItemText(l, it) {
		add(line)
	}
	for _, r := range it.Rows {
		add(r.Label + ": " + r.Value)
	}
	if len(extra) > 0 {
		b.WriteString(" — " + strings.Join(extra, " · "))
	}
	return b.String()
}

func buttons(acts []cards.Action, entry uuid.UUID) []discordgo.MessageComponent {
	rows := []discordgo.MessageComponent{}
	var row []discordgo.MessageComponent
	n := min(len(acts), MaxActionRows*MaxButtonsPerRow)
	for i, a := range acts[:n] {
		style := discordgo.SecondaryButton
		switch a.Style {
		case cards.StylePrimary:
			style = discordgo.PrimaryButton
		case cards.StyleDanger:
			style = discordgo.DangerButton
		}
		row = append(row, discordgo.Button{
			Label:    nonEmpty(cards.Truncate(oneLine(a.Label), MaxButtonLabel)),
			Style:    style,
			CustomID: cards.ButtonID(entry, &a),
		})
		if len(row) == MaxButtonsPerRow || i == n-1 {
			rows = append(rows, discordgo.ActionsRow{Components: row})
			row = nil
		}
	}
	return rows
}

// embedLen counts what Discord counts towards the 6,000 characters of a
// message: titles, descriptions, field names and values, footers, authors.
func embedLen(e *discordgo.MessageEmbed) int {
	n := cards.Len(e.Title) + cards.Len(e.Description)
	if e.Footer != nil {
		n += cards.Len(e.Footer.Text)
	}
	if e.Author != nil {
		n += cards.Len(e.Author.Name)
	}
	for _, f := range e.Fields {
		n += cards.Len(f.Name) + cards.Len(f.Value)
	}
	return n
}

// fitTotal shares the message budget out between the embeds: the small ones
// keep everything, the large ones share what is left equally (water
// filling), then each is cut to its share.
func fitTotal(embeds []*discordgo.MessageEmbed, total int) {
	sizes := make([]int, len(embeds))
	sum := 0
	for i, e := range embeds {
		sizes[i] = embedLen(e)
		sum += sizes[i]
	}
	if sum <= total {
		return
	}
	order := make([]int, len(embeds))
	for i := range order {
		order[i] = i
	}
	// Smallest first.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && sizes[order[j]] < sizes[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	left := total
	for k, i := range order {
		share := left / (len(order) - k)
		alloc := min(sizes[i], share)
		if sizes[i] > alloc {
			shrink(embeds[i], alloc)
		}
		left -= embedLen(embeds[i])
	}
}

// shrink cuts an embed to at most budget characters: the author and title
// first keep what they can (at most a quarter each), then the footer (a
// quarter of what is left), then description and fields share the rest.
func shrink(e *discordgo.MessageEmbed, budget int) {
	if e.Author != nil {
		e.Author.Name = cards.Truncate(e.Author.Name, max(1, min(MaxAuthor, budget/4)))
		budget -= cards.Len(e.Author.Name)
	}
	e.Title = cards.Truncate(e.Title, max(1, min(MaxTitle, budget/4)))
	budget -= cards.Len(e.Title)
	if e.Footer != nil {
		e.Footer.Text = cards.Truncate(e.Footer.Text, max(1, budget/4))
		budget -= cards.Len(e.Footer.Text)
	}
	fields := 0
	for _, f := range e.Fields {
		fields += cards.Len(f.Name) + cards.Len(f.Value)
	}
	if cards.Len(e.Description)+fields <= budget {
		return
	}
	// The description gets at least half, more if the fields are small.
	descBudget := min(cards.Len(e.Description), max(budget/2, budget-fields))
	e.Description = cards.Truncate(e.Description, max(0, descBudget))
	budget -= cards.Len(e.Description)
	kept := e.Fields[:0]
	for _, f := range e.Fields {
		name := cards.Len(f.Name)
		if name+cards.Len(f.Value) <= budget {
			kept = append(kept, f)
			budget -= name + cards.Len(f.Value)
			continue
		}
		if budget-name >= 2 {
			f.Value = cards.Truncate(f.Value, budget-name)
			kept = append(kept, f)
		}
		break
	}
	e.Fields = kept
	if len(e.Fields) == 0 {
		e.Fields = nil
	}
}

func taskPrefix(done *bool) string {
	if box := cards.TaskBox(done); box != "" {
		return box + " "
	}
	return ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// nonEmpty keeps a required Discord string valid: an empty field name or
// button label is rejected, a zero-width space is not.
func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "\u200b"
	}
	return s
}

func escapeLinkText(s string) string {
	return strings.NewReplacer("[", "(", "]", ")").Replace(s)
}

// webURL is u when it is an http(s) address, else "". Stored cards are not
// validated again, and Discord refuses a whole message over one bad URL.
func webURL(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return u
	}
	return ""
}
