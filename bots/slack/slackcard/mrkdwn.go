package slackcard

import (
	"strings"

	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"

	"github.com/switchboardhq/switchboard/core/cards"
)

// esc makes user text safe inside mrkdwn: "<!channel>" is shown, not sent.
func esc(s string) string { return mrkdwn.Escape(s) }

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

// link writes a linked, bold title. A link that is not to a web or mail
// address is dropped (mrkdwn.Link), so a card cannot broadcast or mention.
func link(title, url string) string {
	if url == "" || !mrkdwn.SafeURL(url) {
		return "*" + esc(title) + "*"
	}
	return "*" + mrkdwn.Link(url, strings.ReplaceAll(title, "|", "¦")) + "*"
}
