package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
)

// cardButton is a card action as a button: its ActionID routes the click
// to the card entry's declared action (cards.ActionID).
func cardButton(entry uuid.UUID, actionID, label string) bots.Button {
	return bots.Button{ActionID: cards.ActionID(entry, actionID), Value: actionID, Label: label}
}

// onReaction hands a person's reaction on one of the bot's options to
// core as the option's click. Other reactions are nobody's business.
func (a *Adapter) onReaction(ctx context.Context, roomID id.RoomID, ev *event.Event) error {
	var c content
	if err := json.Unmarshal(ev.Content.VeryRaw, &c); err != nil || c.RelatesTo == nil ||
		c.RelatesTo.RelType != string(event.RelAnnotation) || c.RelatesTo.EventID == "" {
		return nil
	}
	target := id.EventID(c.RelatesTo.EventID)
	orig, err := a.cli.GetEvent(ctx, roomID, target)
	if err != nil {
		a.log.DebugContext(ctx, "reading the event a matrix reaction annotates", "event_id", target, "err", err)
		return nil
	}
	if orig.Sender != a.bot {
		return nil
	}
	var oc content
	if err := json.Unmarshal(orig.Content.VeryRaw, &oc); err != nil {
		return nil
	}
	var chosen *option
	for i := range oc.Options {
		if sameKey(oc.Options[i].Key, c.RelatesTo.Key) {
			chosen = &oc.Options[i]
			break
		}
	}
	if chosen == nil {
		return nil
	}
	info, err := a.room(ctx, roomID)
	if err != nil {
		return err
	}
	name := info.nameOf(ev.Sender)
	actx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	res, err := a.opts.Submitter.Act(actx, &core.Action{
		Platform: Platform, EventID: ev.ID.String(), ActionID: chosen.ActionID, Value: chosen.Value,
		UserID: ev.Sender.String(), UserName: name, At: time.UnixMilli(ev.Timestamp),
	})
	cancel()
	to := bots.Target{Platform: Platform, Channel: roomID.String(), Thread: threadOf(&oc)}
	say := func(text string) {
		// Keyed by the reaction: a batch synced again does not say it twice.
		m := &bots.Message{Text: text, Key: "reaction:" + ev.ID.String()}
		if _, err := a.Post(ctx, to, m); err != nil {
			a.log.WarnContext(ctx, "answering a matrix reaction", "event_id", ev.ID, "err", err)
		}
	}
	switch {
	case errors.Is(err, core.ErrNotPending):
		say(name + ": this was already decided.")
		return nil
	case errors.Is(err, core.ErrInvalid):
		a.log.WarnContext(ctx, "matrix option refused by core", "action_id", chosen.ActionID, "err", err)
		say(name + ": this choice no longer works.")
		return nil
	case err != nil:
		return fmt.Errorf("handing the matrix reaction %s to core: %w", ev.ID, err)
	case res.Refused:
		reason := res.Reason
		if reason == "" {
			reason = "you can't make this choice."
		}
		say(name + ": " + reason)
		return nil
	case res.Duplicate && res.Settled != nil:
		say(name + ": " + settledText(res.Settled))
		return nil
	case res.Duplicate:
		return nil // this very reaction, seen before
	}
	// Show the choice in place of the options.
	text := oc.Body
	if n := len(oc.Options); n > 0 {
		text = stripOptions(oc.Body)
	}
	note := fmt.Sprintf("**%s** — chosen by %s", chosen.Label, name)
	edited := markdown(text+"\n\n"+note, event.MsgText)
	if err := a.edit(ctx, roomID, target, &message{MessageEventContent: edited}, txnID("chosen:"+ev.ID.String(), "e", 0)); err != nil {
		a.log.WarnContext(ctx, "showing a matrix choice", "event_id", target, "err", err)
	}
	return nil
}

// threadOf is the thread an event of the bot's is in ("" for none).
func threadOf(c *content) string {
	if c.RelatesTo != nil && c.RelatesTo.RelType == string(event.RelThread) {
		return c.RelatesTo.EventID
	}
	return ""
}

// stripOptions removes the options list contentOf appended to a body.
func stripOptions(body string) string {
	for _, k := range optionKeys[:1] {
		if i := lastIndex(body, "\n\n"+k+" "); i >= 0 {
			return body[:i]
		}
	}
	return body
}

func lastIndex(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// settledText says how a choice was settled before a late reaction.
func settledText(s *core.Settled) string {
	if s.Expired {
		return "this request expired before anyone chose."
	}
	by := s.By
	if by == "" {
		by = "someone"
	}
	return fmt.Sprintf("this was already decided: %s, by %s.", s.Choice, by)
}
