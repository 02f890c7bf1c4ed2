package slack

import (
	"context"
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
// place.
//
// Which message shows a run is kept in this process: after a restart the
// next change starts a new message with every step.

// runStreams are the messages showing runs, by run and thread.
type runStreams struct {
	mu    sync.Mutex
	byKey map[string]*runStream
}

type runStream struct {
	channel, ts string
	sent        map[string]slack.TaskUpdateChunk // last chunk sent per step
	done        bool
	fallback    []bots.MessageRef
}

var _ bots.RunShower = (*Adapter)(nil)

// ShowRun implements bots.RunShower.
func (a *Adapter) ShowRun(ctx context.Context, to bots.Target, v *bots.RunView) error {
	w, channel, err := a.target(ctx, to)
	if err != nil {
		return fmt.Errorf("showing a run on slack: %w", err)
	}
	key := v.ID + "/" + channel + "/" + to.Thread
	a.runs.mu.Lock()
	defer a.runs.mu.Unlock()
	if a.runs.byKey == nil {
		a.runs.byKey = map[string]*runStream{}
	}
	rs := a.runs.byKey[key]
	if rs != nil && rs.done {
		if v.Final() {
			return nil
		}
		rs = nil // retried: a new message follows the run from here
	}
	if rs == nil {
		rs = &runStream{channel: channel, sent: map[string]slack.TaskUpdateChunk{}}
		a.runs.byKey[key] = rs
	}
	if !nativeEligible(to, channel) {
		return a.showRunText(ctx, to, rs, v)
	}
	var chunks []slack.StreamChunk
	if rs.ts == "" {
		chunks = append(chunks, slack.NewPlanUpdateChunk(truncateRunes("Plan: "+v.Title, slacklimit.TaskText)))
	}
	for _, s := range v.Steps {
		c := taskChunk(s)
		if prev, ok := rs.sent[s.Key]; ok && rs.ts != "" && sameTask(prev, c) {
			continue
		}
		chunks = append(chunks, c)
	}
	if v.Final() {
		chunks = append(chunks, slack.NewPlanUpdateChunk(truncateRunes(v.Title+": "+v.Status, slacklimit.TaskText)))
	}
	if len(chunks) == 0 {
		return nil
	}
	if rs.ts != "" {
		err := a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
			_, _, err := w.api.AppendStreamContext(ctx, channel, rs.ts, slack.MsgOptionChunks(chunks...))
			return err
		})
		if err != nil {
			// The message left streaming (Slack ends old streams): go on
			// in a new one that shows every step.
			a.log.WarnContext(ctx, "appending to a run's slack stream; starting a new one", "run_id", v.ID, "ts", rs.ts, "error", err)
			rs.ts, rs.sent = "", map[string]slack.TaskUpdateChunk{}
			return a.restartRun(ctx, w, to, rs, v)
		}
	} else {
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
			return a.showRunText(ctx, to, rs, v)
		}
		rs.ts = ts
	}
	for _, s := range v.Steps {
		rs.sent[s.Key] = taskChunk(s)
	}
	if v.Final() {
		rs.done = true
		err := a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
			_, _, err := w.api.StopStreamContext(ctx, channel, rs.ts)
			return err
		})
		if err != nil {
			return fmt.Errorf("stopping the slack stream of run %s: %w", v.ID, err)
		}
	}
	return nil
}

// restartRun starts a new stream for rs showing every step (the lock
// held).
func (a *Adapter) restartRun(ctx context.Context, w *workspace, to bots.Target, rs *runStream, v *bots.RunView) error {
	chunks := []slack.StreamChunk{slack.NewPlanUpdateChunk(truncateRunes("Plan: "+v.Title, slacklimit.TaskText))}
	for _, s := range v.Steps {
		chunks = append(chunks, taskChunk(s))
	}
	opts := []slack.MsgOption{slack.MsgOptionTS(to.Thread), slack.MsgOptionChunks(chunks...)}
	if to.UserID != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(to.UserID))
	}
	if to.Workspace != "" {
		opts = append(opts, slack.MsgOptionRecipientTeamID(to.Workspace))
	}
	var ts string
	err := a.retry(ctx, "chat.startStream", func(ctx context.Context) error {
		var err error
		_, ts, err = w.api.StartStreamContext(ctx, rs.channel, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("starting a slack stream for run %s: %w", v.ID, err)
	}
	rs.ts = ts
	for _, s := range v.Steps {
		rs.sent[s.Key] = taskChunk(s)
	}
	return nil
}

// showRunText posts the run as text, then edits that message.
func (a *Adapter) showRunText(ctx context.Context, to bots.Target, rs *runStream, v *bots.RunView) error {
	msg := &bots.Message{Text: v.Text}
	if len(rs.fallback) > 0 {
		return a.Update(ctx, rs.fallback[0], msg)
	}
	refs, err := a.Post(ctx, to, msg)
	if err != nil {
		return err
	}
	rs.fallback = refs
	rs.done = v.Final()
	return nil
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
