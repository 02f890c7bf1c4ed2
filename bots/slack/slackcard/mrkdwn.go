package slackcard

import (
	"regexp"
	"strings"

	"github.com/switchboardhq/switchboard/core/cards"
)

// escaper escapes the three characters Slack reserves for its own markup.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// esc makes user text safe inside mrkdwn: "<!channel>" is shown, not sent.
func esc(s string) string { return escaper.Replace(s) }

var (
	mdLink     = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^\s)]+)\)`)
	mdBold     = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	mdItalic   = regexp.MustCompile(`(^|[^*\w])\*([^*\n]+)\*`)
	mdStrike   = regexp.MustCompile(`~~([^~\n]+)~~`)
	mdHeading  = regexp.MustCompile(`^#{1,6}\s+(.+)$`)
	mdBullet   = regexp.MustCompile(`^(\s*)[-*+]\s+`)
	boldMarker = "\x01"
)

// mrkdwn converts the Markdown a model writes into Slack's mrkdwn: bold,
// italic, strike, links, headings and bullets. Everything else passes
// through escaped. Code spans and blocks are left as they are; Slack reads
// backticks the same way.
func mrkdwn(md string) string {
	lines := strings.Split(md, "\n")
	inFence := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			lines[i] = esc(line)
			continue
		}
		if inFence {
			lines[i] = esc(line)
			continue
		}
		line = esc(line)
		if m := mdHeading.FindStringSubmatch(line); m != nil {
			line = boldMarker + m[1] + boldMarker
		}
		line = mdBullet.ReplaceAllString(line, "$1• ")
		line = mdLink.ReplaceAllStringFunc(line, func(s string) string {
			m := mdLink.FindStringSubmatch(s)
			return "<" + m[2] + "|" + strings.ReplaceAll(m[1], "|", "¦") + ">"
		})
		line = mdBold.ReplaceAllString(line, boldMarker+"$1$2"+boldMarker)
		line = mdItalic.ReplaceAllString(line, "${1}_${2}_")
		line = mdStrike.ReplaceAllString(line, "~$1~")
		lines[i] = strings.ReplaceAll(line, boldMarker, "*")
	}
	return strings.Join(lines, "\n")
}

// cut shortens mrkdwn to max characters without leaving half of a link
// ("<https://…") or of an escape ("&am…"), either of which Slack would show
// as garbage or reject.
func cut(s string, max int) string {
	if cards.Len(s) <= max {
		return s
	}
	body := strings.TrimSuffix(cards.Truncate(s, max), cards.Ellipsis)
	if i := strings.LastIndexByte(body, '<'); i >= 0 && !strings.Contains(body[i:], ">") {
		body = body[:i]
	}
	if i := strings.LastIndexByte(body, '&'); i >= 0 && !strings.Contains(body[i:], ";") {
		body = body[:i]
	}
	// An odd number of code fences would turn the ellipsis and all that
	// follows into code; close the fence.
	if strings.Count(body, "```")%2 == 1 {
		if max-cards.Len(body) >= 5 {
			return strings.TrimRight(body, " \n") + cards.Ellipsis + "\n```"
		}
		body = body[:strings.LastIndex(body, "```")]
	}
	return strings.TrimRight(body, " \n") + cards.Ellipsis
}

// link writes a linked, bold title.
func link(title, url string) string {
	t := esc(title)
	if url == "" {
		return "*" + t + "*"
	}
	return "*<" + esc(url) + "|" + strings.ReplaceAll(t, "|", "¦") + ">*"
}
