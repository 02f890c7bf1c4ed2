package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
)

// part is one Slack message of a bots.Message: mrkdwn text and, on the last
// part, the blocks (card, buttons).
type part struct {
	text   string
	blocks []slack.Block
	// key and index tag the message (metadata) so that a post whose answer
	// was lost can be found again (see FindPosted).
	key   string
	index int
}

// render converts a message into the Slack messages that show it: the text
// split within TextLimit, with a card's blocks or the buttons on the last.
func (a *Adapter) render(ctx context.Context, m *bots.Message) []part {
	if m.Markdown && m.Card == nil && !m.Ephemeral {
		if parts := a.markdownParts(m); parts != nil {
			return parts
		}
	}
	text := mrkdwn.Convert(m.Text)
	buttons := buttonBlocks(m.Buttons)
	if m.Card != nil {
		card, fallback, err := a.opts.RenderCardFunc(m.Card)
		if err == nil && len(card) > 0 {
			blocks := slices.Concat(card, buttons)
			if len(blocks) > slacklimit.Blocks {
				a.log.WarnContext(ctx, "card has more blocks than slack shows; cutting", "blocks", len(blocks))
				blocks = blocks[:slacklimit.Blocks]
			}
			if strings.TrimSpace(fallback) == "" {
				fallback = firstPart(text, a.opts.TextLimit)
			}
			return []part{{text: truncateRunes(fallback, slacklimit.MessageText), blocks: blocks}}
		}
		a.log.WarnContext(ctx, "card did not render; posting its text", "err", err)
	}
	var parts []part
	for _, t := range mrkdwn.Split(text, a.opts.TextLimit) {
		parts = append(parts, part{text: t})
	}
	if len(parts) == 0 {
		// Nothing to show but perhaps buttons; Slack refuses an empty
		// message without them, as it always did.
		parts = []part{{text: text}}
	}
	if fb := a.feedbackBlock(m); fb != nil {
		buttons = append(buttons, fb)
	}
	if len(buttons) > 0 {
		last := &parts[len(parts)-1]
		if strings.TrimSpace(last.text) != "" {
			last.blocks = append(last.blocks, sectionBlock(last.text))
		}
		last.blocks = append(last.blocks, buttons...)
	}
	return parts
}

// markdownParts shows a model's Markdown as Slack's markdown block, which
// renders standard Markdown as written: one message per 12,000 characters
// (the limit of a message's markdown blocks together), cut between lines
// and never inside a code block, with the buttons on the last. Each
// message's text, what notifications and old clients show, is the same
// piece in mrkdwn. Nil when the text shows nothing.
func (a *Adapter) markdownParts(m *bots.Message) []part {
	// Defused before the split, so that what it adds counts within the
	// limit.
	pieces := splitMarkdown(mrkdwn.Defuse(m.Text), slacklimit.MarkdownBlock)
	if len(pieces) == 0 {
		return nil
	}
	parts := make([]part, 0, len(pieces))
	for _, p := range pieces {
		parts = append(parts, part{
			text:   truncateRunes(mrkdwn.Convert(p), slacklimit.MessageText),
			blocks: []slack.Block{slack.NewMarkdownBlock("", p)},
		})
	}
	last := &parts[len(parts)-1]
	last.blocks = append(last.blocks, buttonBlocks(m.Buttons)...)
	if fb := a.feedbackBlock(m); fb != nil {
		last.blocks = append(last.blocks, fb)
	}
	return parts
}

// splitMarkdown cuts Markdown into pieces of at most limit characters,
// between lines where it can, closing and reopening a code block it cuts
// (mrkdwn.Split, which reads fences as Convert writes them: a fence's
// language is dropped when the text has to be cut).
func splitMarkdown(md string, limit int) []string {
	if utf8.RuneCountInString(md) <= limit {
		if strings.TrimSpace(md) == "" {
			return nil
		}
		return []string{md}
	}
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") && !strings.Contains(t[3:], "`") {
			lines[i] = "```"
		}
	}
	return mrkdwn.Split(strings.Join(lines, "\n"), limit)
}

func sectionBlock(text string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
}

// buttonBlocks lays buttons out in actions blocks of at most 25. ActionID and
// Value go to Slack as they are and come back in the click.
func buttonBlocks(buttons []bots.Button) []slack.Block {
	var out []slack.Block
	for start := 0; start < len(buttons); start += slacklimit.ActionsElements {
		var elems []slack.BlockElement
		for _, b := range buttons[start:min(start+slacklimit.ActionsElements, len(buttons))] {
			label := truncateRunes(b.Label, slacklimit.ButtonText)
			if label == "" {
				label = truncateRunes(b.Value, slacklimit.ButtonText)
			}
			btn := slack.NewButtonBlockElement(b.ActionID, b.Value, slack.NewTextBlockObject(slack.PlainTextType, label, true, false))
			switch b.Style {
			case "primary":
				btn = btn.WithStyle(slack.StylePrimary)
			case "danger":
				btn = btn.WithStyle(slack.StyleDanger)
			}
			elems = append(elems, btn)
		}
		out = append(out, slack.NewActionBlock("", elems...))
	}
	return out
}

// truncateRunes cuts s to at most n characters, ending in … when cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Post posts m in the target's thread and returns every message it made.
// Long text is split into several messages; files are uploaded into the same
// thread after the text.
func (a *Adapter) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	if m == nil {
		return nil, errors.New("posting to slack: nil message")
	}
	w, channel, err := a.target(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("posting to slack: %w", err)
	}
	if m.Ephemeral {
		return a.postEphemeral(ctx, w, channel, to, m)
	}
	var refs []bots.MessageRef
	if strings.TrimSpace(m.Text) != "" || len(m.Buttons) > 0 || m.Card != nil {
		for i, p := range a.render(ctx, m) {
			p.key, p.index = m.Key, i
			ts, err := a.postPart(ctx, w, channel, to.Thread, p, m.Identity)
			if err != nil {
				return refs, err
			}
			refs = append(refs, bots.MessageRef{Channel: channel, ID: ts})
		}
	}
	files, err := a.postFiles(ctx, w, channel, to.Thread, m)
	if err == nil {
		a.postVoice(ctx, w, channel, to.Thread, m)
	}
	return append(refs, files...), err
}

func (a *Adapter) postPart(ctx context.Context, w *workspace, channel, thread string, p part, id *bots.Identity) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(p.text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	if len(p.blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(p.blocks...))
	}
	if p.key != "" {
		opts = append(opts, slack.MsgOptionMetadata(slack.SlackMetadata{
			EventType:    MetadataEventType,
			EventPayload: map[string]any{"key": p.key, "part": p.index},
		}))
	}
	opts = append(opts, identityOptions(id)...)
	if err := a.waitTurn(ctx, channel); err != nil {
		return "", err
	}
	var ts string
	err := a.retry(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = w.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("posting to slack channel %s: %w", channel, refusal(err))
	}
	return ts, nil
}

func identityOptions(id *bots.Identity) []slack.MsgOption {
	if id == nil {
		return nil
	}
	var opts []slack.MsgOption
	if id.Name != "" {
		opts = append(opts, slack.MsgOptionUsername(id.Name))
	}
	if id.IconURL != "" {
		opts = append(opts, slack.MsgOptionIconURL(id.IconURL))
	}
	return opts
}

func (a *Adapter) postEphemeral(ctx context.Context, w *workspace, channel string, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	if to.UserID == "" {
		return nil, errors.New("posting an ephemeral slack message: target has no UserID")
	}
	parts := a.render(ctx, m)
	p := parts[0]
	if len(parts) > 1 { // one ephemeral message: keep the start and the buttons
		p.blocks = parts[len(parts)-1].blocks
		if len(p.blocks) > 0 {
			p.blocks = append([]slack.Block{sectionBlock(p.text)}, withoutSections(p.blocks)...)
		}
	}
	opts := []slack.MsgOption{slack.MsgOptionText(p.text, false)}
	if to.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(to.Thread))
	}
	if len(p.blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(p.blocks...))
	}
	opts = append(opts, identityOptions(m.Identity)...)
	if err := a.waitTurn(ctx, channel); err != nil {
		return nil, err
	}
	var ts string
	err := a.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		var err error
		ts, err = w.api.PostEphemeralContext(ctx, channel, to.UserID, opts...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("posting an ephemeral message to %s in %s: %w", to.UserID, channel, err)
	}
	return []bots.MessageRef{{Channel: channel, ID: ts}}, nil
}

func withoutSections(blocks []slack.Block) []slack.Block {
	var out []slack.Block
	for _, b := range blocks {
		if _, ok := b.(*slack.SectionBlock); !ok {
			out = append(out, b)
		}
	}
	return out
}

// Update replaces a posted message. One message holds at most 40,000
// characters of text, or 50 blocks of 3,000 when it has buttons or a card;
// beyond that the text is cut.
func (a *Adapter) Update(ctx context.Context, ref bots.MessageRef, m *bots.Message) error {
	if m == nil {
		return errors.New("updating a slack message: nil message")
	}
	w, err := a.workspaceFor(ctx, a.teamOfChannel(ref.Channel))
	if err != nil {
		return fmt.Errorf("updating slack message %s in %s: %w", ref.ID, ref.Channel, err)
	}
	text, blocks := a.renderOne(ctx, m)
	return a.updateMessage(ctx, w, ref.Channel, ref.ID, text, blocks)
}

// renderOne renders m as a single message.
func (a *Adapter) renderOne(ctx context.Context, m *bots.Message) (string, []slack.Block) {
	if m.Markdown && m.Card == nil && utf8.RuneCountInString(m.Text) <= slacklimit.MarkdownBlock {
		if parts := a.markdownParts(m); len(parts) == 1 {
			return parts[0].text, parts[0].blocks
		}
	}
	text := mrkdwn.Convert(m.Text)
	if m.Card == nil && len(m.Buttons) == 0 && a.feedbackBlock(m) == nil {
		if utf8.RuneCountInString(text) > slacklimit.MessageText {
			a.log.WarnContext(ctx, "message longer than slack keeps; cutting", "chars", utf8.RuneCountInString(text))
			text = firstPart(text, slacklimit.MessageText-1) + "…"
		}
		return text, nil
	}
	parts := a.render(ctx, m)
	if len(parts) == 1 {
		return parts[0].text, parts[0].blocks
	}
	// Several parts: one section per part, then the buttons.
	var blocks []slack.Block
	for _, p := range parts {
		blocks = append(blocks, sectionBlock(p.text))
	}
	blocks = append(blocks, buttonBlocks(m.Buttons)...)
	if fb := a.feedbackBlock(m); fb != nil {
		blocks = append(blocks, fb)
	}
	if len(blocks) > slacklimit.Blocks {
		a.log.WarnContext(ctx, "message longer than one slack message holds; cutting", "blocks", len(blocks))
		blocks = append(blocks[:slacklimit.Blocks-len(buttonBlocks(m.Buttons))], buttonBlocks(m.Buttons)...)
	}
	return parts[0].text, blocks
}

// updateMessage calls chat.update. No blocks clears the message's blocks,
// which removes buttons it had.
func (a *Adapter) updateMessage(ctx context.Context, w *workspace, channel, ts, text string, blocks []slack.Block) error {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	err := a.retry(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := w.api.UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("updating slack message %s in %s: %w", ts, channel, refusal(err))
	}
	return nil
}

// SetStatus shows what the agent is doing under the thread's composer
// (assistant.threads.setStatus); "" clears it. Statuses live on threads, so
// a target without a thread is left alone.
func (a *Adapter) SetStatus(ctx context.Context, to bots.Target, status string) error {
	if to.Thread == "" {
		return nil
	}
	w, channel, err := a.target(ctx, to)
	if err != nil {
		return fmt.Errorf("setting slack thread status: %w", err)
	}
	if a.opts.AgentSessions {
		session := slack.AgentSessionStatusProcessing
		if status == "" {
			session = slack.AgentSessionStatusActive
		}
		a.sessions.set(ctx, a, w, bots.Target{Channel: channel, Thread: to.Thread}, session)
	}
	params := slack.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: to.Thread, Status: status}
	err = a.retry(ctx, "assistant.threads.setStatus", func(ctx context.Context) error {
		return w.api.SetAssistantThreadsStatusContext(ctx, params)
	})
	if err != nil {
		return fmt.Errorf("setting slack thread status in %s/%s: %w", channel, to.Thread, err)
	}
	return nil
}

// channelFor is the target's channel, or the DM with its user (reminders and
// pulses name only the user).
func (a *Adapter) channelFor(ctx context.Context, w *workspace, to bots.Target) (string, error) {
	if to.Channel != "" {
		return to.Channel, nil
	}
	if to.UserID == "" {
		return "", errors.New("slack target has neither Channel nor UserID")
	}
	dmKey := w.team + "/" + to.UserID
	a.dmMu.Lock()
	ch, ok := a.dms[dmKey]
	a.dmMu.Unlock()
	if ok {
		return ch, nil
	}
	var c *slack.Channel
	err := a.retry(ctx, "conversations.open", func(ctx context.Context) error {
		var err error
		c, _, _, err = w.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{to.UserID}})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("opening a slack DM with %s: %w", to.UserID, err)
	}
	a.dmMu.Lock()
	a.dms[dmKey] = c.ID
	a.dmMu.Unlock()
	return c.ID, nil
}

// uploadFiles uploads each file (files upload v2: get an upload URL, send
// the bytes, complete) and shares it in the channel or thread. Each step is
// retried on its own, so a rate limit never shares a file twice.
func (a *Adapter) uploadFiles(ctx context.Context, w *workspace, channel, thread string, files []bots.File) error {
	for _, f := range files {
		if len(f.Data) == 0 {
			return bots.Refused("the file is empty", fmt.Errorf("uploading %q to slack: the file is empty", f.Name))
		}
		name := firstOf(f.Name, "file")
		var u *slack.GetUploadURLExternalResponse
		err := a.retry(ctx, "files.getUploadURLExternal", func(ctx context.Context) error {
			var err error
			u, err = w.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{
				FileName: name, FileSize: len(f.Data), AltTxt: f.Title,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("getting a slack upload url for %q: %w", name, refusal(err))
		}
		err = a.retry(ctx, "files upload", func(ctx context.Context) error {
			return w.api.UploadToURL(ctx, slack.UploadToURLParameters{
				UploadURL: u.UploadURL, Reader: bytes.NewReader(f.Data), Filename: name,
			})
		})
		if err != nil {
			return fmt.Errorf("uploading %q to slack: %w", name, refusal(err))
		}
		if err := a.waitTurn(ctx, channel); err != nil {
			return err
		}
		err = a.retry(ctx, "files.completeUploadExternal", func(ctx context.Context) error {
			_, err := w.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
				Files:           []slack.FileSummary{{ID: u.FileID, Title: firstOf(f.Title, name)}},
				Channel:         channel,
				ThreadTimestamp: thread,
				InitialComment:  mrkdwn.Convert(f.Caption),
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("sharing %q in slack channel %s: %w", name, channel, refusal(err))
		}
	}
	return nil
}

// firstPart is the first message of text split within limit, or "" when
// the text shows nothing.
func firstPart(text string, limit int) string {
	if parts := mrkdwn.Split(text, limit); len(parts) > 0 {
		return parts[0]
	}
	return ""
}
