// Package slackcard renders a stamped card (core/cards) as Slack Block Kit:
// a header, a section per item with its rows as fields and its image as an
// accessory, context lines, and an actions block of buttons, always inside
// Slack's limits. Text that does not fit is cut with an ellipsis; items
// that do not fit are counted in a "+N more" line. Nothing is rejected.
//
// Slack's image blocks need a public URL, so sparklines are drawn as
// Unicode block characters in the text. An adapter that wants the picture
// can render it (headless/chart), upload it with files.uploadV2 and post it
// beside the card; this package does not do I/O.
package slackcard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core/cards"
)

// FallbackMaxLen keeps the notification text short: it is what shows in a
// push notification and what a screen reader reads first. A choice, well
// below Slack's slacklimit.MessageText.
const FallbackMaxLen = 3000

// Lengths this renderer chooses below Slack's limits, so one long value
// cannot crowd out the rest of a card.
const (
	maxTitle     = 250
	maxListLine  = 600
	maxCalloutLn = 1000
)

// Options configures Render.
type Options struct {
	// EntryID is the id of the card's entry. Buttons carry it in their
	// action_id so a click can be routed back; it is required when the card
	// shows buttons.
	EntryID uuid.UUID
}

func (o Options) validate(s *cards.Stamped) error {
	if s.Outcome == "" && len(s.Actions) > 0 && o.EntryID == uuid.Nil {
		return errors.New("options.EntryID: required to render a card with buttons")
	}
	return nil
}

// Render draws the card as Block Kit blocks and the plain fallback text for
// notifications. It never returns blocks outside Slack's limits.
func Render(s *cards.Stamped, opts Options) (blocks []slack.Block, fallback string, err error) {
	if s == nil {
		return nil, "", errors.New("rendering card for slack: nil card")
	}
	if err := opts.validate(s); err != nil {
		return nil, "", fmt.Errorf("rendering card for slack: %w", err)
	}
	l := s.Layout.Normalized()
	r := renderer{layout: l}

	blocks = append(blocks, slack.NewHeaderBlock(plain(s.Heading(), slacklimit.HeaderText)))
	if strings.TrimSpace(s.Summary) != "" {
		blocks = append(blocks, section(mrkdwn.Convert(cards.Truncate(s.Summary, 2*slacklimit.SectionText))))
	}

	var tail []slack.Block
	switch {
	case s.Outcome != "":
		tail = append(tail, contextBlock(esc(s.Outcome)))
	case len(s.Actions) > 0:
		tail = append(tail, actions(s.Actions, opts.EntryID))
	}

	shown, hidden := s.Shown()
	// One block is kept for the "+N more" line, needed or not, so the
	// budget never has to be recomputed.
	budget := slacklimit.Blocks - len(blocks) - len(tail) - 1
	var body []slack.Block
	var drawn int
	if l.Style == cards.StyleList {
		body, drawn = r.list(shown, budget)
	} else {
		body, drawn = r.detail(shown, budget)
	}
	hidden += len(shown) - drawn
	blocks = append(blocks, body...)
	if hidden > 0 {
		blocks = append(blocks, contextBlock(cards.MoreText(hidden)))
	}
	blocks = append(blocks, tail...)
	return blocks, cut(esc(s.PlainTextMax(FallbackMaxLen)), FallbackMaxLen), nil
}

type renderer struct {
	layout cards.Layout
}

// detail draws each item as its own group of blocks within budget, and
// returns how many items it drew.
func (r renderer) detail(items []cards.Item, budget int) ([]slack.Block, int) {
	var out []slack.Block
	drawn := 0
	for i := range items {
		left := len(items) - i
		room := budget - len(out)
		divider := 0
		if i > 0 {
			divider = 1
		}
		// Share what is left fairly between the items still to draw, so a
		// first item with a hundred sections cannot starve the others.
		allowance := max(room/left, 1+divider)
		if allowance > room {
			break
		}
		if divider == 1 {
			out = append(out, slack.NewDividerBlock())
		}
		out = append(out, r.item(&items[i], allowance-divider)...)
		drawn++
	}
	return out, drawn
}

// item draws one item in at most allowance (≥ 1) blocks.
func (r renderer) item(it *cards.Item, allowance int) []slack.Block {
	l := r.layout
	var text []string
	var fields []*slack.TextBlockObject
	text = append(text, taskPrefix(it.Done)+link(cards.Truncate(cards.ItemTitle(it), maxTitle), it.Link))
	rowLine := func(row cards.Row) string {
		return "*" + esc(cards.Truncate(row.Label, maxTitle)) + ":* " + esc(cards.Truncate(row.Value, slacklimit.FieldText))
	}
	// Stacked rows read as a header (To, When) and come first; side-by-side
	// rows are fields, and those beyond Slack's ten follow the text.
	if !l.InlineRows {
		for _, row := range it.Rows {
			text = append(text, rowLine(row))
		}
	}
	var after []slack.Block // callouts, sections, chips, in part order
	var sections []cards.Section
	for _, part := range l.Parts {
		switch part {
		case cards.PartSubtitle:
			if it.Subtitle != "" {
				text = append(text, esc(cards.Truncate(it.Subtitle, slacklimit.FieldText)))
			}
		case cards.PartPrice:
			if it.Price != nil {
				text = append(text, "*"+esc(cards.FormatPrice(*it.Price))+"*")
			}
		case cards.PartRating:
			if it.Rating != nil {
				text = append(text, cards.RatingText(*it.Rating))
			}
		case cards.PartChanges:
			if len(it.Changes) > 0 {
				cs := make([]string, len(it.Changes))
				for i, c := range it.Changes {
					cs[i] = esc(cards.ChangeText(c))
				}
				text = append(text, strings.Join(cs, "   "))
			}
		case cards.PartSparkline:
			if sp := it.Sparkline; sp != nil {
				if line := cards.SparklineText(sp.Values, cards.SparklineWidth); line != "" {
					text = append(text, strings.TrimSpace("`"+line+"` "+esc(sp.Label)))
				}
			}
		case cards.PartCallouts:
			if len(it.Callouts) > 0 {
				lines := make([]string, len(it.Callouts))
				for i, c := range it.Callouts {
					t := cards.CalloutIcon(c.Level) + " "
					if c.Title != "" {
						t += "*" + esc(cards.Truncate(c.Title, maxTitle)) + "* "
					}
					lines[i] = cut(t+mrkdwn.Convert(cards.Truncate(c.Text, 2*maxCalloutLn)), maxCalloutLn)
				}
				after = append(after, section(strings.Join(lines, "\n")))
			}
		case cards.PartSections:
			if len(it.Sections) > 0 {
				sections = it.Sections
				after = append(after, nil) // placeholder: sections go here
			}
		case cards.PartChips:
			if len(it.Chips) > 0 {
				after = append(after, contextBlock(esc(strings.Join(it.Chips, "  ·  "))))
			}
		}
	}
	if l.InlineRows {
		n := min(len(it.Rows), slacklimit.SectionFields)
		for _, row := range it.Rows[:n] {
			fields = append(fields, mrk(cut("*"+esc(cards.Truncate(row.Label, maxTitle))+"*\n"+esc(row.Value), slacklimit.FieldText)))
		}
		for _, row := range it.Rows[n:] {
			text = append(text, rowLine(row))
		}
	}

	main := slack.NewSectionBlock(mrk(cut(strings.Join(text, "\n"), slacklimit.SectionText)), fields, nil)
	var image slack.Block
	if it.Image != "" && cards.Len(it.Image) <= slacklimit.ImageURL {
		alt := cards.Truncate(firstNonEmpty(it.ImageAlt, it.Title), slacklimit.ImageAltText)
		switch l.Image {
		case cards.ImageThumbnail:
			main.Accessory = slack.NewAccessory(slack.NewImageBlockElement(it.Image, alt))
		case cards.ImageLarge:
			image = slack.NewImageBlock(it.Image, alt, "", nil)
		}
	}
	fixed := 0
	for _, b := range after {
		if b != nil {
			fixed++
		}
	}
	out := []slack.Block{main}
	if image != nil {
		out = append(out, image)
		fixed++
	}
	// Sections take the room the other parts leave, and at least one block:
	// they matter more than the chips, which are cut first below.
	sectionRoom := max(allowance-1-fixed, 1)
	for _, b := range after {
		if b == nil {
			out = append(out, sectionBlocks(sections, sectionRoom)...)
			continue
		}
		out = append(out, b)
	}
	if len(out) > allowance {
		out = out[:allowance]
	}
	return out
}

// sectionBlocks draws text sections in at most room blocks; when they do
// not all fit, the last block says how many were left out.
func sectionBlocks(secs []cards.Section, room int) []slack.Block {
	if room <= 0 {
		return nil
	}
	n := min(len(secs), room)
	out := make([]slack.Block, 0, n)
	for i, sec := range secs[:n] {
		// Converting only what can be shown keeps a huge section cheap.
		t := mrkdwn.Convert(cards.Truncate(sec.Text, 2*slacklimit.SectionText))
		if sec.Title != "" {
			t = "*" + esc(cards.Truncate(sec.Title, maxTitle)) + "*\n" + t
		}
		if i == n-1 && n < len(secs) {
			more := fmt.Sprintf("\n_+%d more sections_", len(secs)-n)
			t = cut(t, slacklimit.SectionText-cards.Len(more)) + more
		}
		out = append(out, section(t))
	}
	return out
}

// list draws one line per item, packed into as few sections as fit.
func (r renderer) list(items []cards.Item, budget int) ([]slack.Block, int) {
	var out []slack.Block
	var cur []string
	curLen := 0
	drawn := 0
	flush := func() {
		if len(cur) > 0 {
			out = append(out, section(strings.Join(cur, "\n")))
			cur, curLen = nil, 0
		}
	}
	for i := range items {
		line := cut(r.listLine(&items[i]), maxListLine)
		n := cards.Len(line) + 1
		if curLen+n > slacklimit.SectionText {
			if len(out)+1 >= budget {
				break // the current block is the last one allowed
			}
			flush()
		}
		cur = append(cur, line)
		curLen += n
		drawn++
	}
	flush()
	return out, drawn
}

func (r renderer) listLine(it *cards.Item) string {
	var b strings.Builder
	if box := cards.TaskBox(it.Done); box != "" {
		b.WriteString(box + " ")
	} else {
		b.WriteString("• ")
	}
	b.WriteString(link(cards.Truncate(cards.ItemTitle(it), maxTitle), it.Link))
	var extra []string
	size := 0
	add := func(s string) {
		if size <= maxListLine { // the line is cut to maxListLine anyway
			s = esc(strings.ReplaceAll(cards.Truncate(s, maxListLine), "\n", " "))
			extra = append(extra, s)
			size += cards.Len(s)
		}
	}
	for _, line := range cards.ItemText(r.layout, it) {
		add(line)
	}
	for _, row := range it.Rows {
		add(row.Label + ": " + row.Value)
	}
	if len(extra) > 0 {
		b.WriteString(" — " + strings.Join(extra, " · "))
	}
	return b.String()
}

func actions(acts []cards.Action, entry uuid.UUID) slack.Block {
	n := min(len(acts), slacklimit.ActionsElements)
	elems := make([]slack.BlockElement, 0, n)
	for _, a := range acts[:n] {
		btn := slack.NewButtonBlockElement(cards.ButtonID(entry, &a), a.ID, plain(a.Label, slacklimit.ButtonText))
		switch a.Style {
		case cards.StylePrimary:
			btn.Style = slack.StylePrimary
		case cards.StyleDanger:
			btn.Style = slack.StyleDanger
		}
		elems = append(elems, btn)
	}
	return slack.NewActionBlock("", elems...)
}

func plain(s string, max int) *slack.TextBlockObject {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if s == "" {
		s = " "
	}
	return slack.NewTextBlockObject(slack.PlainTextType, cards.Truncate(s, max), true, false)
}

func mrk(s string) *slack.TextBlockObject {
	if strings.TrimSpace(s) == "" {
		s = " "
	}
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func section(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrk(cut(text, slacklimit.SectionText)), nil, nil)
}

func contextBlock(text string) *slack.ContextBlock {
	return slack.NewContextBlock("", mrk(cut(text, slacklimit.ContextText)))
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return "image"
}

func taskPrefix(done *bool) string {
	if box := cards.TaskBox(done); box != "" {
		return box + " "
	}
	return ""
}
