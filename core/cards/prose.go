package cards

import (
	"strings"
)

// BriefingFromProse fills the briefing template from a reply written as
// prose (a model that answered in Markdown instead of calling
// post_result): each heading starts an item with its text as a section,
// what comes before the first heading is the summary, and a reply without
// headings is one item titled title. Markdown stays as written; the card
// renderers format it. It fails when the text is empty or the card would
// not validate.
func BriefingFromProse(title, text string) (*Result, error) {
	r := &Result{Kind: KindBriefing, Template: "briefing", Title: title}
	var cur *Item
	var body []string
	flush := func() {
		t := strings.TrimSpace(strings.Join(body, "\n"))
		body = nil
		switch {
		case cur != nil:
			if t != "" {
				cur.Sections = append(cur.Sections, Section{Text: t})
			}
			r.Items = append(r.Items, *cur)
			cur = nil
		case t != "":
			r.Summary = t
		}
	}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
		}
		if h, ok := proseHeading(trimmed); ok && !inFence {
			flush()
			cur = &Item{Title: h}
			continue
		}
		body = append(body, line)
	}
	flush()
	if len(r.Items) == 0 && r.Summary != "" {
		// No headings: the whole reply is the one item's text.
		r.Items = []Item{{Title: title, Sections: []Section{{Text: r.Summary}}}}
		r.Summary = ""
	}
	if len(r.Items) == 0 {
		return nil, &ValidationError{Problems: []FieldError{{Path: "items", Msg: "the reply has no text to fill the briefing from"}}}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// proseHeading reads a Markdown ATX heading (# to ######) or a line that is
// bold alone (**Weather**), which models use as headings too.
func proseHeading(s string) (string, bool) {
	if n := len(s) - len(strings.TrimLeft(s, "#")); n >= 1 && n <= 6 && len(s) > n && s[n] == ' ' {
		return strings.TrimSpace(strings.Trim(s[n:], "# ")), strings.TrimSpace(s[n:]) != ""
	}
	if len(s) > 4 && strings.HasPrefix(s, "**") && strings.HasSuffix(s, "**") && !strings.Contains(s[2:len(s)-2], "**") {
		return strings.TrimSuffix(strings.TrimSpace(s[2:len(s)-2]), ":"), true
	}
	return "", false
}
