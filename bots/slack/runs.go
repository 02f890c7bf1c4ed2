package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
)

// A run's progress in the thread it came from: one streamed message
// (chat.startStream) that opens with a plan_update chunk (the plan's
// title) and a task_update chunk per step, then gets a task_update chunk
// each time a step moves, and a last plan_update with the outcome when the
// run ends, which stops the stream. Where Slack's streaming does not apply
// (no thread, no recipient) the run shows as a text message edited in
// place. A run retried after its message showed how it ended gets a new
// message from there; the ended one keeps showing the earlier attempt.
//
// Which message shows a run, whether its stream is open and the chunk last
// sent per step are recorded through bots.RunMessages (deliver keeps them
// in the store), not in this process. After a restart, or on another
// instance, the next change appends to the same stream. If Slack refuses
// that (it ends streams that sit idle, or someone pressed stop), the
// stream is stopped and that same message is replaced (chat.update) by
// the run as text, which later changes edit in place: the person sees
// the plan view of the message turn into the run's text, and never two
// messages that both claim to show the run.
//
// The record is claimed (made with a unique key) before chat.startStream
// and names the message right after Slack answers. If the process dies in
// between, the record is left without a message; Slack has no idempotency
// key for chat.startStream and a streamed message carries no metadata to
// find it by, and taking the bot's newest message for it could overwrite a
// reply, so once the intent is older than a post takes (see
// bots.RunMessages.Claim) the next change posts the run again. In that
// window (one store write after the call) the thread can show a second
// progress message, the first left as it stood.

// Kinds of a run's Slack message, as recorded.
const (
	runKindStream = "stream" // a stream of plan and task chunks
	runKindText   = "text"   // a text message edited in place
)

// runStreams serialises the run views this process shows.
type runStreams struct {
	mu sync.Mutex
}

// runSent is what a run's stream was last sent, per step.
type runSent struct {
	Steps map[string]slack.TaskUpdateChunk `json:"steps,omitempty"`
}

var _ bots.RunShower = (*Adapter)(nil)

// ShowRun implements bots.RunShower.
func (a *Adapter) ShowRun(ctx context.Context, to bots.Target, v *bots.RunView, rec bots.RunMessages) error {
	w, channel, err := a.target(ctx, to)
	if err != nil {
		return fmt.Errorf("showing a run on slack: %w", err)
	}
	a.runs.mu.Lock()
	defer a.runs.mu.Unlock()
	m, err := rec.Load(ctx)
	if err != nil {
		return fmt.Errorf("showing run %s on slack: %w", v.ID, err)
	}
	native := nativeEligible(to, channel)
	kind := runKindText
	if native {
		kind = runKindStream
	}
	if m != nil && m.Ended && v.Final() {
		return nil // it shows how the run ended
	}
	if m == nil || m.Ended || m.Posting() {
		// The first message, a retried run's new one, or one whose
		// process died before recording it.
		var won bool
		if m, won, err = rec.Claim(ctx, kind); err != nil {
			return fmt.Errorf("showing run %s on slack: %w", v.ID, err)
		} else if !won {
			return fmt.Errorf("showing run %s on slack: another process is posting its message", v.ID)
		}
	}
	switch {
	case m.Posting() && native:
		return a.startRun(ctx, w, to, channel, rec, v)
	case m.Posting():
		return a.postRunText(ctx, to, rec, v)
	case m.Kind == runKindStream:
		return a.appendRun(ctx, w, channel, rec, m, v)
	}
	return a.updateRunText(ctx, rec, m.Ref, v)
}

// startRun starts the run's stream showing every step.
func (a *Adapter) startRun(ctx context.Context, w *workspace, to bots.Target, channel string, rec bots.RunMessages, v *bots.RunView) error {
	chunks := []slack.StreamChunk{slack.NewPlanUpdateChunk(truncateRunes("Plan: "+v.Title, slacklimit.TaskText))}
	for _, s := range v.Steps {
		chunks = append(chunks, taskChunk(s))
	}
	if v.Final() {
		chunks = append(chunks, finalChunk(v))
	}
	opts := []slack.MsgOption{slack.MsgOptionTS(to.Thread), slack.MsgOptionChunks(chunks...)}
	if to.UserID != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(to.UserID))
	}
	if to.Workspace != "" {
		opts = append(opts, slack.MsgOptionRecipientTeamID(to.Workspace))
	}
	if err := a.waitTurn(ctx, channel); err != nil {
		return err
	}
	var ts string
	err := a.retry(ctx, "chat.startStream", func(ctx context.Context) error {
		var err error
		_, ts, err = w.api.StartStreamContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		a.log.WarnContext(ctx, "slack chat streaming unavailable for a run; showing it as text", "run_id", v.ID, "error", err)
		return a.postRunText(ctx, to, rec, v)
	}
	ref := bots.MessageRef{Channel: channel, ID: ts}
	if err := rec.Save(ctx, &bots.RunMessage{Ref: ref, Kind: runKindStream, Sent: sentOf(v, nil)}); err != nil {
		return err
	}
	if v.Final() {
		return a.stopRun(ctx, w, rec, ref, v)
	}
	return nil
}

// appendRun appends the steps that moved since the recorded chunks to the
// run's stream; a stream Slack no longer takes becomes the run's text.
func (a *Adapter) appendRun(ctx context.Context, w *workspace, channel string, rec bots.RunMessages, m *bots.RunMessage, v *bots.RunView) error {
	var sent runSent
	if len(m.Sent) > 0 {
		if err := json.Unmarshal(m.Sent, &sent); err != nil {
			return fmt.Errorf("reading what run %s's slack stream was sent: %w", v.ID, err)
		}
	}
	var chunks []slack.StreamChunk
	for _, s := range v.Steps {
		c := taskChunk(s)
		if prev, ok := sent.Steps[s.Key]; ok && sameTask(prev, c) {
			continue
		}
		chunks = append(chunks, c)
	}
	if v.Final() {
		chunks = append(chunks, finalChunk(v))
	}
	if len(chunks) == 0 {
		return nil
	}
	err := a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
		_, _, err := w.api.AppendStreamContext(ctx, channel, m.Ref.ID, slack.MsgOptionChunks(chunks...))
		return err
	})
	if err != nil {
		// Slack ended the stream (idle too long, or stopped by a person):
		// the same message goes on as text.
		a.log.WarnContext(ctx, "appending to a run's slack stream; showing the run as text in its message", "run_id", v.ID, "ts", m.Ref.ID, "error", err)
		_ = a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
			_, _, err := w.api.StopStreamContext(ctx, channel, m.Ref.ID)
			return err
		})
		return a.updateRunText(ctx, rec, m.Ref, v)
	}
	if err := rec.Save(ctx, &bots.RunMessage{Ref: m.Ref, Kind: runKindStream, Sent: sentOf(v, sent.Steps)}); err != nil {
		return err
	}
	if v.Final() {
		return a.stopRun(ctx, w, rec, m.Ref, v)
	}
	return nil
}

// stopRun stops the stream of a run that ended and records it ended.
func (a *Adapter) stopRun(ctx context.Context, w *workspace, rec bots.RunMessages, ref bots.MessageRef, v *bots.RunView) error {
	err := a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := w.api.StopStreamContext(ctx, ref.Channel, ref.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("stopping the slack stream of run %s: %w", v.ID, err)
	}
	return rec.Save(ctx, &bots.RunMessage{Ref: ref, Kind: runKindStream, Ended: true, Sent: sentOf(v, nil)})
}

// postRunText posts the run as text.
func (a *Adapter) postRunText(ctx context.Context, to bots.Target, rec bots.RunMessages, v *bots.RunView) error {
	refs, err := a.Post(ctx, to, &bots.Message{Text: v.Text})
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return fmt.Errorf("posting run %s on slack: no message made", v.ID)
	}
	return rec.Save(ctx, &bots.RunMessage{Ref: refs[0], Kind: runKindText, Ended: v.Final()})
}

// updateRunText replaces the run's message with the run as text.
func (a *Adapter) updateRunText(ctx context.Context, rec bots.RunMessages, ref bots.MessageRef, v *bots.RunView) error {
	if err := a.Update(ctx, ref, &bots.Message{Text: v.Text}); err != nil {
		return err
	}
	return rec.Save(ctx, &bots.RunMessage{Ref: ref, Kind: runKindText, Ended: v.Final()})
}

// sentOf is the record of the chunks sent for v's steps over prev's.
func sentOf(v *bots.RunView, prev map[string]slack.TaskUpdateChunk) json.RawMessage {
	s := runSent{Steps: map[string]slack.TaskUpdateChunk{}}
	for k, c := range prev {
		s.Steps[k] = c
	}
	for _, st := range v.Steps {
		s.Steps[st.Key] = taskChunk(st)
	}
	b, _ := json.Marshal(s)
	return b
}

// finalChunk says how the run ended.
func finalChunk(v *bots.RunView) slack.StreamChunk {
	return slack.NewPlanUpdateChunk(truncateRunes(v.Title+": "+v.Status, slacklimit.TaskText))
}

// taskChunk is a step as a task card.
func taskChunk(s bots.RunStepView) slack.TaskUpdateChunk {
	status := slack.TaskCardStatusPending
	switch s.Status {
	case "working":
		status = slack.TaskCardStatusInProgress
	case "done":
		status = slack.TaskCardStatusComplete
	case "failed", "cancelled":
		status = slack.TaskCardStatusError
	}
	c := slack.TaskUpdateChunk{
		Type: slack.StreamChunkTaskUpdate, ID: s.Key, Status: status,
		Title:   truncateRunes(fmt.Sprintf("%s (%s)", s.Title, s.Agent), slacklimit.TaskText),
		Details: truncateRunes(s.Detail, slacklimit.TaskText),
	}
	if s.Status == "cancelled" {
		c.Details = truncateRunes("cancelled. "+s.Detail, slacklimit.TaskText)
	}
	return c
}

func sameTask(a, b slack.TaskUpdateChunk) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Status == b.Status && a.Details == b.Details && a.Output == b.Output
}
