package cards

import (
	"fmt"
	"strings"
)

// PlainText renders the card as plain text: the notification fallback on
// chat platforms, what a screen reader gets, and the card in a terminal.
// Every item is written (no MaxItems cut), in the layout's part order.
func (s *Stamped) PlainText() string { return s.plainText(-1) }

// PlainTextMax is PlainText cut to at most max characters, without writing
// out the rest of a large card first.
func (s *Stamped) PlainTextMax(max int) string {
	return Truncate(s.plainText(4*(max+1)), max)
}

// plainText stops once the text passes limit bytes (none when negative):
// any text of 4(n+1) bytes has more than n characters.
func (s *Stamped) plainText(limit int) string {
	l := s.Layout.Normalized()
	var b strings.Builder
	b.WriteString(s.Heading())
	b.WriteByte('\n')
	if s.Summary != "" {
		b.WriteString(s.Summary)
		b.WriteByte('\n')
	}
	if l.Style == StyleList && len(s.Items) > 0 {
		b.WriteByte('\n')
	}
	for i := range s.Items {
		if limit >= 0 && b.Len() > limit {
			break
		}
		it := &s.Items[i]
		if l.Style == StyleList {
			b.WriteString(ItemLine(l, it))
			b.WriteByte('\n')
			continue
		}
		fmt.Fprintf(&b, "\n%d. %s\n", i+1, it.Title)
		rows := func() {
			for _, r := range it.Rows {
				fmt.Fprintf(&b, "   %s: %s\n", r.Label, r.Value)
			}
		}
		// Stacked rows read as a header (To, When); side-by-side rows as
		// details after the body.
		if !l.InlineRows {
			rows()
		}
		for _, line := range ItemText(l, it) {
			b.WriteString("   ")
			b.WriteString(strings.ReplaceAll(line, "\n", "\n   "))
			b.WriteByte('\n')
		}
		if l.InlineRows {
			rows()
		}
		if it.Link != "" {
			fmt.Fprintf(&b, "   %s\n", it.Link)
		}
	}
	switch {
	case s.Outcome != "":
		b.WriteString("\n" + s.Outcome + "\n")
	case len(s.Actions) > 0:
		labels := make([]string, len(s.Actions))
		for i, a := range s.Actions {
			labels[i] = "[" + a.Label + "]"
		}
		b.WriteString("\n" + strings.Join(labels, " ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// ItemText is an item's body as plain lines in the layout's order (title,
// rows, link and image excluded). Renderers that need no markup use it;
// the others walk Layout.Parts themselves.
func ItemText(l Layout, it *Item) []string {
	var lines []string
	for _, part := range l.Parts {
		switch part {
		case PartSubtitle:
			if it.Subtitle != "" {
				lines = append(lines, it.Subtitle)
			}
		case PartPrice:
			if it.Price != nil {
				lines = append(lines, FormatPrice(*it.Price))
			}
		case PartRating:
			if it.Rating != nil {
				lines = append(lines, RatingText(*it.Rating))
			}
		case PartChanges:
			if len(it.Changes) > 0 {
				cs := make([]string, len(it.Changes))
				for i, c := range it.Changes {
					cs[i] = ChangeText(c)
				}
				lines = append(lines, strings.Join(cs, "  "))
			}
		case PartSparkline:
			if it.Sparkline != nil {
				if sp := SparklineText(it.Sparkline.Values, SparklineWidth); sp != "" {
					lines = append(lines, strings.TrimSpace(sp+" "+it.Sparkline.Label))
				}
			}
		case PartChips:
			if len(it.Chips) > 0 {
				lines = append(lines, "["+strings.Join(it.Chips, "] [")+"]")
			}
		case PartCallouts:
			for _, c := range it.Callouts {
				t := CalloutIcon(c.Level) + " "
				if c.Title != "" {
					t += c.Title + ": "
				}
				lines = append(lines, t+c.Text)
			}
		case PartSections:
			for _, sec := range it.Sections {
				if sec.Title != "" {
					lines = append(lines, sec.Title)
				}
				lines = append(lines, sec.Text)
			}
		}
	}
	return lines
}

// ItemLine is an item as one plain line, for list layouts.
func ItemLine(l Layout, it *Item) string {
	var b strings.Builder
	if box := TaskBox(it.Done); box != "" {
		b.WriteString(box + " ")
	} else {
		b.WriteString("• ")
	}
	b.WriteString(it.Title)
	var extra []string
	for _, line := range ItemText(l, it) {
		extra = append(extra, strings.ReplaceAll(line, "\n", " "))
	}
	for _, r := range it.Rows {
		extra = append(extra, r.Label+": "+r.Value)
	}
	if len(extra) > 0 {
		b.WriteString(" — " + strings.Join(extra, " · "))
	}
	if it.Link != "" {
		b.WriteString(" " + it.Link)
	}
	return b.String()
}

// ItemTitle is the item's title, or a stand-in for a damaged item without
// one, so no platform is sent an empty title.
func ItemTitle(it *Item) string {
	if strings.TrimSpace(it.Title) == "" {
		return "Untitled"
	}
	return it.Title
}
