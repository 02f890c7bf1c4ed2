package slack

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

// handleEdit hands an edit (message_changed) or a deletion
// (message_deleted) of a person's message to core, which forks the
// conversation at an edited message or marks a deleted one. The bot's own
// messages, other bots' and edits core cannot take are dropped.
func (a *Adapter) handleEdit(ctx context.Context, w *workspace, cb *callback, ev *innerEvent) error {
	ed, ok := a.opts.Submitter.(core.MessageEditor)
	if !ok {
		return nil
	}
	m := ev.Message
	if ev.Subtype == "message_deleted" {
		m = ev.PreviousMessage
		if m != nil && m.TS == "" {
			m.TS = ev.DeletedTS
		}
	}
	if m == nil || m.TS == "" || m.User == "" || m.BotID != "" || m.User == w.me.UserID {
		a.log.DebugContext(ctx, "ignoring a slack edit", "subtype", ev.Subtype, "event_id", cb.EventID)
		return nil
	}
	e := &core.MessageEdit{
		Platform: PlatformName, EventID: cb.EventID, Workspace: firstOf(cb.TeamID, ev.Team), Channel: ev.Channel,
		MessageID: m.TS, UserID: m.User, Deleted: ev.Subtype == "message_deleted",
		Text: plainText(stripMention(m.Text, w.me.UserID)),
	}
	// The thread the message was bound under, as normalise set it: a DM's
	// top-level messages have none, a channel message starts its own.
	e.Thread = m.ThreadTS
	if ev.ChannelType != "im" && e.Thread == "" {
		e.Thread = m.TS
	}
	if e.EventID == "" {
		e.EventID = "edit:" + ev.Channel + ":" + m.TS + ":" + ev.TS
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	res, err := ed.EditMessage(subCtx, e)
	if err != nil {
		return fmt.Errorf("submitting slack %s %s: %w", ev.Subtype, cb.EventID, err)
	}
	a.log.DebugContext(ctx, "slack edit submitted", "subtype", ev.Subtype, "event_id", cb.EventID,
		"ignored", res.Ignored, "duplicate", res.Duplicate, "conversation_id", res.ConversationID)
	return nil
}

// ThreadOf implements bots.ThreadStarter: on Slack any message starts a
// thread whose thread_ts is the message's ts.
func (a *Adapter) ThreadOf(ref bots.MessageRef) (channel, thread string) {
	return ref.Channel, ref.ID
}
