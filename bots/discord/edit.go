package discord

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core"
)

// Edits and deletions of people's messages (MESSAGE_UPDATE, MESSAGE_DELETE)
// go to core when the Submitter takes them (core.MessageEditor): an edit of
// a message in a conversation forks it there with the new text, and a
// deletion is marked in the log.

func (a *Adapter) onMessageUpdate(_ *discordgo.Session, ev *discordgo.MessageUpdate) {
	if ev.Message == nil || ev.Author == nil || ev.Author.Bot || ev.WebhookID != "" || ev.EditedTimestamp == nil {
		return // an embed unfurled, or a bot's message: not a person's edit
	}
	a.submitEdit(ev.Message, &core.MessageEdit{
		EventID: "edit:" + ev.ID + ":" + ev.EditedTimestamp.UTC().Format("20060102T150405.000000"),
		UserID:  ev.Author.ID, UserName: displayName(ev.Author, ev.Member),
		Text: messageText(ev.Message, a.botUserID()),
	})
}

func (a *Adapter) onMessageDelete(_ *discordgo.Session, ev *discordgo.MessageDelete) {
	if ev.Message == nil {
		return
	}
	// Discord does not say who deleted it (the author or a moderator).
	a.submitEdit(ev.Message, &core.MessageEdit{EventID: "delete:" + ev.ID, Deleted: true})
}

// submitEdit fills in where the message is, as normalize placed it, and
// hands the edit to core. A message that started a thread (thread on
// mention) is bound under the thread of its own id, which is tried second.
func (a *Adapter) submitEdit(m *discordgo.Message, e *core.MessageEdit) {
	ed, ok := a.opts.Submitter.(core.MessageEditor)
	if !ok || m.ID == "" || m.ChannelID == "" || !a.enter() {
		return
	}
	defer a.leave()
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.SubmitTimeout)
	defer cancel()
	e.Platform, e.Workspace, e.Channel, e.MessageID = Platform, m.GuildID, m.ChannelID, m.ID
	if m.GuildID != "" {
		if info, err := a.channel(ctx, m.ChannelID); err == nil && info.thread {
			e.Channel, e.Thread = info.parentID, m.ChannelID
		}
	}
	res, err := ed.EditMessage(ctx, e)
	if err == nil && res.Ignored && e.Thread == "" && m.GuildID != "" {
		e.Thread = m.ID
		res, err = ed.EditMessage(ctx, e)
	}
	if err != nil {
		a.log.ErrorContext(ctx, "submitting a discord edit", "message_id", m.ID, "deleted", e.Deleted, "err", err)
		return
	}
	a.log.DebugContext(ctx, "discord edit submitted", "message_id", m.ID, "deleted", e.Deleted, "ignored", res.Ignored, "conversation_id", res.ConversationID)
}
