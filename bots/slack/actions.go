package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core"
)

// handleInteraction hands each clicked button of a block_actions payload to
// core, then (after Slack has its answer) tells the user what became of it.
// ActionID and Value are passed through untouched: core put them on the
// button and parses them back.
func (a *Adapter) handleInteraction(ctx context.Context, ic *slack.InteractionCallback) error {
	if handled, err := a.handleShortcut(ctx, ic); handled {
		return err
	}
	if ic.Type != slack.InteractionTypeBlockActions {
		a.log.DebugContext(ctx, "ignoring slack interaction", "type", ic.Type)
		return nil
	}
	for _, act := range ic.ActionCallback.BlockActions {
		if act == nil {
			continue
		}
		if ok, err := a.feedbackClick(ctx, ic, act); ok {
			if err != nil {
				return err
			}
			continue
		}
		value, label := act.Value, act.Text.Text
		if value == "" && act.SelectedOption.Value != "" { // a select menu
			value = act.SelectedOption.Value
			label = act.SelectedOption.Text.Text
		}
		action := &core.Action{
			Platform: PlatformName,
			EventID:  clickID(ic, act),
			ActionID: act.ActionID,
			Value:    value,
			UserID:   ic.User.ID,
			UserName: firstOf(ic.User.Username, ic.User.Name),
			// The clicker's own team: in a shared channel it is not the
			// channel's.
			Workspace: firstOf(ic.User.TeamID, ic.Team.ID),
			At:        parseTS(firstOf(act.ActionTs, ic.ActionTs)),
		}
		subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
		res, err := a.opts.Submitter.Act(subCtx, action)
		cancel()
		if err != nil {
			return fmt.Errorf("handing click %s to core: %w", action.EventID, err)
		}
		if res == nil {
			res = &core.ActionResult{}
		}
		if res.Form != nil { // the button opens a form (forms.go)
			a.openForm(ctx, ic, res, act.ActionID)
			continue
		}
		click := clicked{
			team:     firstOf(ic.Team.ID, ic.User.TeamID),
			channel:  firstOf(ic.Container.ChannelID, ic.Channel.ID),
			ts:       firstOf(ic.Container.MessageTs, ic.Message.Timestamp),
			thread:   firstOf(ic.Container.ThreadTs, ic.Message.ThreadTimestamp),
			user:     ic.User.ID,
			blockID:  act.BlockID,
			choice:   firstOf(res.Outcome, label, value), // what the click did, else its button
			text:     ic.Message.Text,
			blocks:   ic.Message.Blocks.BlockSet,
			refused:  res.Refused,
			reason:   res.Reason,
			repeated: res.Duplicate,
			settled:  res.Settled,
		}
		a.background(func(ctx context.Context) { a.afterClick(ctx, click) })
	}
	return nil
}

// clickID identifies one click for dedupe: trigger_id is unique per
// interaction; the fallback names the message, action and time.
func clickID(ic *slack.InteractionCallback, act *slack.BlockAction) string {
	if ic.TriggerID != "" {
		return "click:" + ic.TriggerID + ":" + act.ActionID
	}
	return "click:" + ic.Container.ChannelID + ":" + ic.Container.MessageTs + ":" + act.ActionID + ":" + ic.User.ID + ":" + act.ActionTs
}

type clicked struct {
	team                      string
	channel, ts, thread, user string
	blockID, choice, text     string
	blocks                    []slack.Block
	refused, repeated         bool
	reason                    string
	settled                   *core.Settled
}

// tellClicker answers the person who clicked, and only them, in the
// click's thread; what names the answer in a warning when Slack refuses it.
func (a *Adapter) tellClicker(ctx context.Context, w *workspace, c clicked, text, what string) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if c.thread != "" {
		opts = append(opts, slack.MsgOptionTS(c.thread))
	}
	err := a.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := w.api.PostEphemeralContext(ctx, c.channel, c.user, opts...)
		return err
	})
	if err != nil {
		a.log.WarnContext(ctx, what, "channel", c.channel, "user", c.user, "err", err)
	}
}

// afterClick answers a refused click privately, or replaces the buttons with
// a line saying what was chosen and by whom.
func (a *Adapter) afterClick(ctx context.Context, c clicked) {
	w, err := a.workspaceFor(ctx, c.team)
	if err != nil {
		a.log.WarnContext(ctx, "answering a click", "team_id", c.team, "err", err)
		return
	}
	a.noteChannel(w.team, c.channel)
	switch {
	case c.refused:
		text := c.reason
		if text == "" {
			text = "This is not yours to answer."
		}
		a.tellClicker(ctx, w, c, mrkdwn.Escape(text), "telling a user their click was refused")
	case c.repeated && c.settled != nil:
		// A late click: only the clicker is told why nothing happened.
		a.tellClicker(ctx, w, c, settledText(c.settled), "telling a user their click came too late")
	case c.repeated:
		a.log.DebugContext(ctx, "click on an already decided message", "channel", c.channel, "ts", c.ts)
	default:
		if c.channel == "" || c.ts == "" {
			return
		}
		blocks := decidedBlocks(c)
		err := a.retry(ctx, "chat.update", func(ctx context.Context) error {
			_, _, _, err := w.api.UpdateMessageContext(ctx, c.channel, c.ts,
				slack.MsgOptionText(firstOf(c.text, "✅ "+mrkdwn.Escape(c.choice)), false),
				slack.MsgOptionBlocks(blocks...))
			return err
		})
		if err != nil {
			a.log.WarnContext(ctx, "marking the choice on a message", "channel", c.channel, "ts", c.ts, "err", err)
		}
	}
}

// decidedBlocks drops the actions block that was clicked (every actions block
// when it cannot tell which) and adds "✅ choice — chosen by @user".
func decidedBlocks(c clicked) []slack.Block {
	var out []slack.Block
	matched := false
	for _, b := range c.blocks {
		if ab, ok := b.(*slack.ActionBlock); ok && c.blockID != "" && ab.BlockID == c.blockID {
			matched = true
		}
	}
	for _, b := range c.blocks {
		if ab, ok := b.(*slack.ActionBlock); ok && (!matched || ab.BlockID == c.blockID) {
			continue
		}
		out = append(out, b)
	}
	if len(out) == 0 && c.text != "" {
		out = append(out, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, truncateRunes(c.text, DefaultTextLimit), false, false), nil, nil))
	}
	line := fmt.Sprintf("✅ *%s* — chosen by <@%s>", mrkdwn.Escape(truncateRunes(c.choice, 200)), c.user)
	out = append(out, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, line, false, false)))
	if len(out) > slacklimit.Blocks {
		out = append(out[:slacklimit.Blocks-1], out[len(out)-1])
	}
	return out
}

// settledText tells a late clicker, in mrkdwn, how the buttons were
// settled: "This approval expired at …; ask again." (the time in the
// reader's own zone), or "Already chosen by @who: choice".
func settledText(st *core.Settled) string {
	if st.Expired {
		fallback := st.At.UTC().Format("2006-01-02 15:04 UTC")
		return fmt.Sprintf("This approval expired at <!date^%d^{date_short_pretty} {time}|%s>; ask again.", st.At.Unix(), fallback)
	}
	who := mrkdwn.Escape(firstOf(st.By, "someone else"))
	if st.Platform == PlatformName && st.ByUserID != "" && validUserID(st.ByUserID) {
		who = "<@" + st.ByUserID + ">"
	}
	text := "Already chosen by " + who
	if st.Choice != "" {
		text += ": *" + mrkdwn.Escape(truncateRunes(st.Choice, 200)) + "*"
	}
	return text + "."
}

// validUserID reports whether id looks like a Slack user id, so that it
// can go into <@…> without opening any other markup.
func validUserID(id string) bool {
	for _, r := range id {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return id != ""
}
