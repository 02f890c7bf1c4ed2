package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// The Markdown form: a title, a short header, then one section per entry.
//
//	# Title
//
//	- agent: atlas
//	- created: 2026-11-02T09:00:00Z
//
//	### 1 · user · user:U1 · 2026-11-02T09:00:01Z
//
//	The text of the message.
//
// An entry whose content is not {"text": ...} is shown as a fenced JSON
// block. ParseMarkdown reads this form back: the text, kinds, authors and
// times come back; ids, turn ids and the fields of a text entry's content
// other than its text do not (JSON is the lossless form).

const entryHeading = "### "

// Markdown renders a document for people.
func Markdown(d *Doc) string {
	var b strings.Builder
	title := d.Conversation.Title
	if title == "" {
		title = "Untitled conversation"
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))
	if d.Conversation.Agent != "" {
		fmt.Fprintf(&b, "- agent: %s\n", d.Conversation.Agent)
	}
	fmt.Fprintf(&b, "- created: %s\n", d.Conversation.CreatedAt.UTC().Format(time.RFC3339Nano))
	if d.Conversation.Archived {
		b.WriteString("- archived: yes\n")
	}
	for _, e := range d.Entries {
		seq := "—"
		if e.Seq != nil {
			seq = strconv.FormatInt(*e.Seq, 10)
		}
		fmt.Fprintf(&b, "\n%s%s · %s · %s · %s\n\n", entryHeading, seq, e.Kind, e.Author, e.CreatedAt.UTC().Format(time.RFC3339Nano))
		if text, ok := plainText(e.Content); ok {
			b.WriteString(strings.TrimRight(text, "\n"))
			b.WriteString("\n")
			continue
		}
		var pretty bytes.Buffer
		if json.Indent(&pretty, e.Content, "", "  ") != nil {
			pretty.Reset()
			pretty.Write(e.Content)
		}
		fmt.Fprintf(&b, "```json\n%s\n```\n", pretty.String())
	}
	return b.String()
}

// plainText is the text of a content that holds only {"text": ...} (and
// fields of no meaning to a reader), when the text has no line that would
// read as an entry heading.
func plainText(raw json.RawMessage) (string, bool) {
	var c map[string]json.RawMessage
	if json.Unmarshal(raw, &c) != nil {
		return "", false
	}
	var text string
	if t, ok := c["text"]; !ok || json.Unmarshal(t, &text) != nil || text == "" {
		return "", false
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, entryHeading) || strings.HasPrefix(line, "```json") {
			return "", false
		}
	}
	return text, true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ParseMarkdown reads the Markdown form back into a document (see the
// package comment for what does not come back).
func ParseMarkdown(text string) (*Doc, error) {
	d := &Doc{Format: Format, Conversation: Conversation{Metadata: json.RawMessage(`{}`)}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var cur *Entry
	var body []string
	next := int64(1)
	flush := func() error {
		if cur == nil {
			return nil
		}
		b := strings.Trim(strings.Join(body, "\n"), "\n")
		if strings.HasPrefix(b, "```json\n") && strings.HasSuffix(b, "\n```") {
			raw := strings.TrimSuffix(strings.TrimPrefix(b, "```json\n"), "\n```")
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(raw)); err != nil {
				return fmt.Errorf("%w: entry %d: its JSON block: %v", ErrInvalid, len(d.Entries)+1, err)
			}
			cur.Content = compact.Bytes()
		} else {
			c, _ := json.Marshal(map[string]string{"text": b})
			cur.Content = c
		}
		d.Entries = append(d.Entries, *cur)
		cur, body = nil, nil
		return nil
	}
	inHeader := true
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inHeader && strings.HasPrefix(line, "# ") && d.Conversation.Title == "":
			d.Conversation.Title = strings.TrimSpace(strings.TrimPrefix(line, "# "))
		case inHeader && strings.HasPrefix(line, "- "):
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
			switch k {
			case "agent":
				d.Conversation.Agent = v
			case "created":
				t, err := time.Parse(time.RFC3339Nano, v)
				if err != nil {
					return nil, fmt.Errorf("%w: created %q is not an RFC 3339 time", ErrInvalid, v)
				}
				d.Conversation.CreatedAt = t
			case "archived":
				d.Conversation.Archived = v == "yes"
			}
		case strings.HasPrefix(line, entryHeading):
			inHeader = false
			if err := flush(); err != nil {
				return nil, err
			}
			parts := strings.Split(strings.TrimPrefix(line, entryHeading), " · ")
			if len(parts) != 4 {
				return nil, fmt.Errorf("%w: heading %q is not \"### seq · kind · author · time\"", ErrInvalid, line)
			}
			e := &Entry{Kind: store.EntryKind(parts[1]), Author: store.Author(parts[2])}
			t, err := time.Parse(time.RFC3339Nano, parts[3])
			if err != nil {
				return nil, fmt.Errorf("%w: heading %q: time %q is not RFC 3339", ErrInvalid, line, parts[3])
			}
			e.CreatedAt = t
			if e.Kind == store.EntryError {
				e.AfterSeq = next - 1
			} else {
				s := next
				e.Seq, e.AfterSeq = &s, next-1
				next++
			}
			cur = e
		case cur != nil:
			body = append(body, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: reading the Markdown: %v", ErrInvalid, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if d.Conversation.Title == "" {
		return nil, fmt.Errorf("%w: no \"# title\" line: not a Switchboard Markdown export", ErrInvalid)
	}
	return d, check(d)
}
