package deliver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/run"
)

// ShowRun implements core.RunProgress: the run's progress is shown in the
// conversation it came from, on each platform bound to it. A platform that
// shows runs itself (bots.RunShower: Slack's plan and task chunks) gets
// the view; one that can edit gets one text message posted, then edited
// as the steps move.
//
// Which message shows a run on a binding is kept in the store
// (core.RunMessage), handed to the platform as bots.RunMessages: after a
// restart, or on another instance, the next change edits the same
// message. Progress items run under the conversation's serialisation, and
// the record is made with a unique key before the first post, so two
// processes never both post a run's first message.
func (d *Deliverer) ShowRun(ctx context.Context, v *core.RunView) error {
	conv, err := d.st.ConversationGet(ctx, v.Run.ConversationID)
	if err != nil {
		return fmt.Errorf("loading conversation %s: %w", v.Run.ConversationID, err)
	}
	bs, err := d.bindings(ctx, conv)
	if err != nil {
		return err
	}
	view := runView(v)
	var errs []error
	for _, b := range bs {
		rec := &runRecord{st: d.st, now: d.opts.Now, key: core.RunMessageKey{RunID: v.Run.ID, BindingID: b.b.ID}, platform: b.b.Place.Platform}
		if rs, ok := b.ad.(bots.RunShower); ok {
			if err := rs.ShowRun(ctx, b.to, view, rec); err != nil {
				errs = append(errs, fmt.Errorf("showing run %s on %s: %w", v.Run.ID, b.b.Place.Platform, err))
			}
			continue
		}
		if err := d.runMessage(ctx, b, view, rec); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var _ core.RunProgress = (*Deliverer)(nil)

// runMessage shows the run as one text message, edited in place where the
// platform can edit (else each change posts the run again). An intent
// left by a process that died between the post and recording it is taken
// over and posted again: such a platform has no way to find the lost
// message.
func (d *Deliverer) runMessage(ctx context.Context, b *bound, v *bots.RunView, rec *runRecord) error {
	m, err := rec.Load(ctx)
	if err != nil {
		return err
	}
	if m == nil || m.Posting() {
		var won bool
		if m, won, err = rec.Claim(ctx, "text"); err != nil {
			return err
		} else if !won {
			return fmt.Errorf("showing run %s on %s: another process is posting its message", v.ID, b.b.Place.Platform)
		}
	}
	// The key makes a repost of a lost first post idempotent where the
	// platform can (a Discord nonce).
	msg := &bots.Message{Text: v.Text, Key: "run-progress:" + v.ID + ":" + b.b.ID.String()}
	if !m.Posting() {
		if ed, ok := b.ad.(bots.Editor); ok {
			if err := ed.Update(ctx, m.Ref, msg); err != nil {
				return fmt.Errorf("editing the progress of run %s on %s: %w", v.ID, b.b.Place.Platform, err)
			}
			return rec.Save(ctx, &bots.RunMessage{Ref: m.Ref, Kind: "text", Ended: v.Final()})
		}
	}
	refs, err := b.ad.Post(ctx, b.to, msg)
	if err != nil {
		return fmt.Errorf("posting the progress of run %s on %s: %w", v.ID, b.b.Place.Platform, err)
	}
	if len(refs) == 0 {
		return nil
	}
	return rec.Save(ctx, &bots.RunMessage{Ref: refs[0], Kind: "text", Ended: v.Final()})
}

// runRecord is bots.RunMessages over the store for one run and binding.
// It remembers the record it last read or wrote, whose message a save
// compares with.
type runRecord struct {
	st       core.RunMessageStore
	now      func() time.Time
	key      core.RunMessageKey
	platform string
	cur      *core.RunMessage
	// stale: cur is an intent Load found left by a dead process.
	stale bool
}

var _ bots.RunMessages = (*runRecord)(nil)

// Load waits while the record is an intent another process made less than
// runPostGrace ago: that process is posting, and waiting for its message
// (then edited) or for the intent to go stale (then taken over) loses no
// change, where failing the item would use up its attempts.
func (r *runRecord) Load(ctx context.Context) (*bots.RunMessage, error) {
	var deadline <-chan time.Time
	for {
		m, err := r.st.RunMessageGet(ctx, &r.key)
		if errors.Is(err, core.ErrNotFound) {
			r.cur, r.stale = nil, false
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the message of run %s: %w", r.key.RunID, err)
		}
		r.cur, r.stale = m, false
		young := runPostGrace - r.now().Sub(m.UpdatedAt)
		if m.State != core.RunMessagePosting || young <= 0 {
			r.stale = m.State == core.RunMessagePosting
			return runMessageOf(m), nil
		}
		if deadline == nil {
			t := time.NewTimer(young)
			defer t.Stop()
			deadline = t.C
		}
		poll := time.NewTimer(runPostPoll)
		select {
		case <-ctx.Done():
			poll.Stop()
			return nil, fmt.Errorf("waiting for another process to post the message of run %s: %w", r.key.RunID, ctx.Err())
		case <-deadline:
			poll.Stop()
			r.stale = true // Claim takes it over
			return runMessageOf(m), nil
		case <-poll.C:
		}
	}
}

// runPostGrace is how long an intent to post a run's message is taken to
// be under way in the process that made it: the work lease's default. A
// live process holds its lease on the conversation while it posts, so
// another process meets its intent only once that lease expired or the
// item ended: an intent still without its message then was left by a
// process that died (or that lost its lease, and counts as dead, as its
// turns do), and another takes it over.
const runPostGrace = 15 * time.Second

// runPostPoll is how often Load looks at another process's intent.
const runPostPoll = 200 * time.Millisecond

func (r *runRecord) Claim(ctx context.Context, kind string) (*bots.RunMessage, bool, error) {
	var (
		m   *core.RunMessage
		err error
	)
	switch {
	case r.cur == nil:
		m, err = r.st.RunMessageCreate(ctx, &core.RunMessageCreateParams{RunID: r.key.RunID, BindingID: r.key.BindingID, Platform: r.platform, Kind: kind, Now: r.now()})
	case r.cur.State == core.RunMessagePosting && !r.stale:
		return nil, false, nil // another process is posting it
	default:
		m, err = r.st.RunMessageSave(ctx, &core.RunMessageSaveParams{
			RunID: r.key.RunID, BindingID: r.key.BindingID, PrevVersion: r.cur.Version, Kind: kind, State: core.RunMessagePosting, Now: r.now(),
		})
	}
	if errors.Is(err, core.ErrConflict) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("recording the intent to show run %s: %w", r.key.RunID, err)
	}
	r.cur, r.stale = m, false
	return runMessageOf(m), true, nil
}

func (r *runRecord) Save(ctx context.Context, m *bots.RunMessage) error {
	var prev int64
	if r.cur != nil {
		prev = r.cur.Version
	}
	state := core.RunMessageLive
	switch {
	case m.Ref.ID == "":
		state = core.RunMessagePosting
	case m.Ended:
		state = core.RunMessageEnded
	}
	saved, err := r.st.RunMessageSave(ctx, &core.RunMessageSaveParams{
		RunID: r.key.RunID, BindingID: r.key.BindingID, PrevVersion: prev, Channel: m.Ref.Channel, MessageID: m.Ref.ID,
		Kind: m.Kind, State: state, Sent: m.Sent, Now: r.now(),
	})
	if err != nil {
		return fmt.Errorf("recording the message of run %s: %w", r.key.RunID, err)
	}
	r.cur, r.stale = saved, false
	return nil
}

func runMessageOf(m *core.RunMessage) *bots.RunMessage {
	out := &bots.RunMessage{Kind: m.Kind, Ended: m.State == core.RunMessageEnded, Sent: m.Sent, Since: m.UpdatedAt}
	if m.MessageID != "" {
		out.Ref = bots.MessageRef{Channel: m.Channel, ID: m.MessageID}
	}
	return out
}

func runView(v *core.RunView) *bots.RunView {
	out := &bots.RunView{ID: v.Run.ID.String(), Title: v.Run.Goal, Status: string(v.Run.Status), Text: runText(v)}
	if out.Title == "" {
		out.Title = "Run " + run.ShortID(v.Run)
	}
	for _, s := range v.Steps {
		detail := ""
		switch {
		case s.Error != "":
			detail = s.Error
		case s.Status == core.StepDone:
			detail = fmt.Sprintf("%d in / %d out tokens, %s", s.InputTokens, s.OutputTokens, run.Cost(s.CostMicroUSD))
		}
		if line := run.ChangesLine(s); line != "" {
			detail = strings.TrimPrefix(detail+" · "+line, " · ")
		}
		out.Steps = append(out.Steps, bots.RunStepView{Key: s.Key, Title: s.Title, Agent: s.Agent, Status: string(s.Status), Detail: detail})
	}
	return out
}

// runText is the progress message's text: the run without its result
// (the result comes as the lead's message).
func runText(v *core.RunView) string {
	r := *v.Run
	r.Result = ""
	return run.Summary(&r, v.Steps)
}
