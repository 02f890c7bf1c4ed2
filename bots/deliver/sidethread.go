package deliver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
)

// Side threads on the platforms. The marker is a small card under the
// message that opened the side thread: the two agents, the status and a
// link to the side conversation. It is drawn from the side thread's status
// as it is when drawn, so a marker posted late is already right; when the
// status changes, HandleSideThreadMarker edits the marker's messages in
// place, on every binding, instead of posting new ones.
//
// On a platform whose messages can carry threads (Discord, a
// bots.ThreadOpener), the marker also opens a real thread, named after
// the two agents, into which the side conversation's messages are copied
// as they are said, and, when the side thread ends, its outcome (the
// summary), while the marker above flips in place. Each of those posts has an
// id of its own (threadKey), so each is posted exactly once.

// statusLabel is how a status reads on a marker.
func statusLabel(s core.SideThreadStatus) string {
	switch s {
	case core.SideThreadStatusResolved:
		return "✅ Resolved"
	case core.SideThreadStatusAbandoned:
		return "⏸️ Abandoned"
	}
	return "💬 In progress"
}

// sideThreadMessage is what people see of a side_thread entry: the marker
// (from the side thread's current status), or the summary posted back.
func (d *Deliverer) sideThreadMessage(ctx context.Context, e *core.Entry) (*bots.Message, error) {
	c, err := core.Decode[core.SideThreadContent](e)
	if err != nil {
		return nil, err
	}
	switch c.Event {
	case core.SideThreadResolved:
		return &bots.Message{
			Text:     fmt.Sprintf("🧵 Side thread between %s and %s resolved by %s:\n%s", c.Opener, c.Peer, c.By, c.Summary),
			Identity: d.opts.IdentityFunc(c.By),
		}, nil
	case core.SideThreadOpened:
	default:
		return nil, nil
	}
	th, err := d.st.SideThreadGet(ctx, c.SideThreadID)
	if err != nil {
		return nil, fmt.Errorf("reading side thread %s: %w", c.SideThreadID, err)
	}
	return markerMessage(e.ID, th, d.opts.LinkFunc(th.ChildID))
}

// markerMessage draws a side thread's marker card.
func markerMessage(entryID uuid.UUID, th *core.SideThread, link string) (*bots.Message, error) {
	status := statusLabel(th.Status)
	item := cards.Item{
		Title:    status,
		Subtitle: fmt.Sprintf("%s ↔ %s", th.Opener, th.Peer),
		Link:     link,
		Rows:     []cards.Row{{Label: "Status", Value: status}},
	}
	if th.Summary != "" {
		item.Rows = append(item.Rows, cards.Row{Label: "Summary", Value: th.Summary})
	}
	if link == "" {
		item.Rows = append(item.Rows, cards.Row{Label: "Conversation", Value: th.ChildID.String()})
	}
	st, err := cards.Stamp(&cards.Result{Kind: cards.KindGeneric, Title: "🧵 Side thread", Items: []cards.Item{item}}, nil)
	if err != nil {
		return nil, fmt.Errorf("drawing the marker of side thread %s: %w", th.ID, err)
	}
	return &bots.Message{Card: &bots.Card{EntryID: entryID, Stamped: st}, Text: st.PlainText()}, nil
}

// threadKey is the post id of a side thread's message in the marker's
// platform thread for one event ("opened", or the final status).
func threadKey(marker uuid.UUID, event string) uuid.UUID {
	return uuid.NewSHA1(marker, []byte("side-thread-thread:"+event))
}

// markerThread opens (or finds) the platform thread of a side thread's
// posted marker and returns the binding that posts into it; nil when the
// platform has no threads of messages, the marker is in a thread already
// (threads do not nest), or it is not posted yet.
func (d *Deliverer) markerThread(ctx context.Context, b *bound, marker uuid.UUID, th *core.SideThread) *bound {
	op, ok := b.ad.(bots.ThreadOpener)
	if !ok || b.to.Thread != "" {
		return nil
	}
	posted, err := d.st.PostedGet(ctx, &core.PostedGetParams{BindingID: b.b.ID, EntryID: marker})
	if err != nil || posted.Pending {
		return nil
	}
	refs := decodeRefs(posted.MessageIDs)
	if len(refs) == 0 {
		return nil
	}
	// Opened before: its first message was posted in it.
	if first, err := d.st.PostedGet(ctx, &core.PostedGetParams{BindingID: b.b.ID, EntryID: threadKey(marker, string(core.SideThreadOpened))}); err == nil && !first.Pending {
		if in := decodeRefs(first.MessageIDs); len(in) > 0 {
			tb := *b
			tb.to.Thread = in[0].Channel
			return &tb
		}
	}
	to, err := op.OpenThread(ctx, b.to, refs[0], fmt.Sprintf("🧵 %s ↔ %s", th.Opener, th.Peer))
	if err != nil {
		// The marker card still shows the side thread; the thread is a
		// view of it, not worth holding the conversation's delivery for.
		d.log.WarnContext(ctx, "opening the side thread's platform thread", "side_thread_id", th.ID, "platform", b.b.Place.Platform, "error", err)
		return nil
	}
	tb := *b
	tb.to = to
	return &tb
}

// sideThreadOpened, once an opened marker is posted, opens its platform
// thread with what the opener asked the peer.
func (d *Deliverer) sideThreadOpened(ctx context.Context, b *bound, e *core.Entry) error {
	c, err := core.Decode[core.SideThreadContent](e)
	if err != nil || c.Event != core.SideThreadOpened {
		return err
	}
	th, err := d.st.SideThreadGet(ctx, c.SideThreadID)
	if err != nil {
		return fmt.Errorf("reading side thread %s: %w", c.SideThreadID, err)
	}
	tb := d.markerThread(ctx, b, e.ID, th)
	if tb == nil {
		return nil
	}
	text := fmt.Sprintf("🧵 Side thread between %s and %s.", th.Opener, th.Peer)
	if link := d.opts.LinkFunc(th.ChildID); link != "" {
		text += "\n" + link
	}
	if err := d.post(ctx, tb, threadKey(e.ID, string(core.SideThreadOpened)), &bots.Message{Text: text}, nil, nil); err != nil {
		return err
	}
	return d.mirror(ctx, tb, th)
}

// mirror copies the side conversation's messages into the marker's
// platform thread, each once (its post is keyed by its entry id): the
// agents' replies, and the messages an agent sent there from elsewhere
// (the opening <dm>, later tags). A reply handed on to the agent it names
// is one message, not two.
func (d *Deliverer) mirror(ctx context.Context, tb *bound, th *core.SideThread) error {
	entries, err := d.st.EntryList(ctx, &core.EntryListParams{ConversationID: th.ChildID})
	if err != nil {
		return fmt.Errorf("reading side conversation %s: %w", th.ChildID, err)
	}
	var prev *core.Entry
	for _, e := range entries {
		who, text := "", ""
		switch e.Kind {
		case core.EntryAssistant:
			if c, err := core.Decode[core.AssistantContent](e); err == nil {
				who, text = c.Agent, c.Text
			}
		case core.EntryUser:
			name, ok := e.Author.Agent()
			if c, err := core.Decode[core.UserContent](e); err == nil && ok &&
				(prev == nil || prev.Kind != core.EntryAssistant || prev.Author != e.Author) {
				who, text = name, c.Text
			}
		}
		prev = e
		if strings.TrimSpace(text) == "" {
			continue
		}
		if err := d.post(ctx, tb, e.ID, &bots.Message{Text: fmt.Sprintf("**%s**: %s", who, text)}, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// mirrorAll copies the side conversation's new messages into the marker's
// platform thread on every binding of the parent that has one.
func (d *Deliverer) mirrorAll(ctx context.Context, th *core.SideThread) error {
	conv, err := d.st.ConversationGet(ctx, th.ParentID)
	if err != nil {
		return fmt.Errorf("loading conversation %s: %w", th.ParentID, err)
	}
	bs, err := d.bindings(ctx, conv)
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range bs {
		if tb := d.markerThread(ctx, b, *th.MarkerEntryID, th); tb != nil {
			errs = append(errs, d.mirror(ctx, tb, th))
		}
	}
	return errors.Join(errs...)
}

// sideThreadEnded posts a side thread's outcome into its marker's
// platform thread, after what was said there.
func (d *Deliverer) sideThreadEnded(ctx context.Context, b *bound, th *core.SideThread) error {
	tb := d.markerThread(ctx, b, *th.MarkerEntryID, th)
	if tb == nil {
		return nil
	}
	if err := d.mirror(ctx, tb, th); err != nil {
		return err
	}
	text := fmt.Sprintf("%s by %s: %s", statusLabel(th.Status), th.FinishedBy, th.Summary)
	if th.Status == core.SideThreadStatusAbandoned {
		text = statusLabel(th.Status) + ": no progress for too long."
	}
	return d.post(ctx, tb, threadKey(*th.MarkerEntryID, string(th.Status)), &bots.Message{Text: text}, nil, nil)
}

// HandleSideThreadMarker is the handler of core.SideThreadMarkerArgs
// items: it edits the side thread's marker on every binding of the parent
// to its current status, in place. A marker not posted yet is posted
// first (by the binding's flush), already showing the status.
func (d *Deliverer) HandleSideThreadMarker(ctx context.Context, _ *core.WorkItem, args core.SideThreadMarkerArgs) error {
	th, err := d.st.SideThreadGet(ctx, args.SideThreadID)
	if err != nil {
		return fmt.Errorf("reading side thread %s: %w", args.SideThreadID, err)
	}
	if th.MarkerEntryID == nil {
		return nil // a DM's side thread has no marker
	}
	if args.Mirror {
		return d.mirrorAll(ctx, th)
	}
	conv, err := d.st.ConversationGet(ctx, th.ParentID)
	if err != nil {
		return fmt.Errorf("loading conversation %s: %w", th.ParentID, err)
	}
	bs, err := d.bindings(ctx, conv)
	if err != nil {
		return err
	}
	msg, err := markerMessage(*th.MarkerEntryID, th, d.opts.LinkFunc(th.ChildID))
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range bs {
		if err := d.editMarker(ctx, b, *th.MarkerEntryID, msg); err != nil {
			errs = append(errs, err)
			continue
		}
		if th.Status != core.SideThreadStatusInProgress {
			if err := d.sideThreadEnded(ctx, b, th); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (d *Deliverer) editMarker(ctx context.Context, b *bound, entryID uuid.UUID, msg *bots.Message) error {
	posted, err := d.st.PostedGet(ctx, &core.PostedGetParams{BindingID: b.b.ID, EntryID: entryID})
	if errors.Is(err, core.ErrNotFound) || (err == nil && posted.Pending) {
		// Not posted yet: posting it now draws the current status.
		return d.flushBinding(ctx, b, nil)
	}
	if err != nil {
		return fmt.Errorf("reading the marker's post: %w", err)
	}
	ed, ok := b.ad.(bots.Editor)
	refs := decodeRefs(posted.MessageIDs)
	if !ok || len(refs) == 0 {
		return nil
	}
	if err := ed.Update(ctx, refs[0], msg); err != nil {
		return fmt.Errorf("editing the side thread marker on %s: %w", b.b.Place.Platform, err)
	}
	return nil
}
