package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core"
)

// The agent messaging experience (features.agent_view): the messages tab
// opening (app_home_opened with tab "messages") and the user's context
// changing (app_context_changed) offer suggested prompts; the agent
// session's status follows the turn (processing while it runs, which shows
// Slack's stop button); the stop button (agent_session_stopped) stops the
// turn on whichever instance runs it (core.Stopper); feedback buttons under
// a reply record a rating (FeedbackFunc).

// Action ids and values of the feedback buttons. The action id carries the
// rated entry, so a click needs no lookup of the message.
const (
	feedbackPrefix   = "sb_feedback:"
	feedbackPositive = "positive"
	feedbackNegative = "negative"
)

// feedbackBlock is the feedback buttons under an agent's final reply, or
// nil when the reply asks for none or nothing records a click.
func (a *Adapter) feedbackBlock(m *bots.Message) slack.Block {
	if a.opts.FeedbackFunc == nil || !m.Feedback || m.Key == "" {
		return nil
	}
	up := slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "👍", true, false), feedbackPositive)
	up.AccessibilityLabel = "Good reply"
	down := slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "👎", true, false), feedbackNegative)
	down.AccessibilityLabel = "Bad reply"
	return slack.NewContextActionsBlock("", slack.NewFeedbackButtonsBlockElement(feedbackPrefix+m.Key, up, down))
}

// feedbackClick records a click on feedback buttons; ok is false when the
// action is not one.
func (a *Adapter) feedbackClick(ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction) (bool, error) {
	key, ok := strings.CutPrefix(act.ActionID, feedbackPrefix)
	if !ok {
		return false, nil
	}
	entry, err := uuid.Parse(key)
	if err != nil || a.opts.FeedbackFunc == nil {
		a.log.WarnContext(ctx, "dropping a feedback click that names no reply", "action_id", act.ActionID)
		return true, nil
	}
	f := &core.Feedback{
		Platform: PlatformName, EventID: clickID(ic, act), Workspace: firstOf(ic.User.TeamID, ic.Team.ID),
		UserID: ic.User.ID, UserName: firstOf(ic.User.Username, ic.User.Name), EntryID: entry,
		Positive: act.Value == feedbackPositive,
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	if err := a.opts.FeedbackFunc(subCtx, f); err != nil {
		if errors.Is(err, core.ErrInvalid) {
			a.log.WarnContext(ctx, "dropping a feedback click", "entry_id", entry, "err", err)
			return true, nil
		}
		return true, fmt.Errorf("recording feedback on %s: %w", entry, err)
	}
	return true, nil
}

// agentEvent holds the fields of the agent_view events the adapter reads.
type agentEvent struct {
	Type     string                  `json:"type"`
	User     string                  `json:"user"`
	Channel  string                  `json:"channel"`
	Tab      string                  `json:"tab"`
	ThreadTS string                  `json:"thread_ts"`
	Context  *slackevents.AppContext `json:"context"`
	// StreamingTS lists the streaming messages Slack stopped
	// (agent_session_stopped).
	StreamingTS []string `json:"streaming_message_ts"`
}

// contextChannel is the channel the user has open, from an app context.
func contextChannel(c *slackevents.AppContext) string {
	if c == nil {
		return ""
	}
	for _, e := range c.Entities {
		if e.Type == slackevents.AppContextEntityChannel && e.Value != "" {
			return e.Value
		}
		if e.Type == slackevents.AppContextEntityMessageContext && e.Message != nil && e.Message.ChannelID != "" {
			return e.Message.ChannelID
		}
	}
	return ""
}

// offerPrompts sets the suggested prompts of the agent conversation in the
// user's DM with the app (no thread: under agent_view they sit at the top
// of the conversation).
func (a *Adapter) offerPrompts(ctx context.Context, w *workspace, dm, thread, contextChan string) {
	prompts := a.prompts(contextChan)
	a.background(func(ctx context.Context) {
		params := slack.AssistantThreadsSetSuggestedPromptsParameters{Title: "Try asking", ChannelID: dm, ThreadTS: thread, Prompts: prompts}
		err := a.retry(ctx, "assistant.threads.setSuggestedPrompts", func(ctx context.Context) error {
			return w.api.SetAssistantThreadsSuggestedPromptsContext(ctx, params)
		})
		if err != nil {
			a.log.WarnContext(ctx, "setting suggested prompts", "channel", dm, "err", err)
		}
	})
}

// handleAgentEvent handles the agent_view events. It returns an error only
// when core failed (Slack delivers again).
func (a *Adapter) handleAgentEvent(ctx context.Context, w *workspace, ev *agentEvent) error {
	switch ev.Type {
	case "app_home_opened":
		switch ev.Tab {
		case "messages":
			if ev.Channel != "" {
				a.offerPrompts(ctx, w, ev.Channel, "", contextChannel(ev.Context))
			}
		case "home":
			if a.opts.HomeFunc != nil && ev.User != "" {
				user, dm := ev.User, ev.Channel
				a.background(func(ctx context.Context) { a.publishHome(ctx, w, user, dm) })
			}
		}
	case "app_context_changed":
		if ev.Channel != "" {
			a.offerPrompts(ctx, w, ev.Channel, "", contextChannel(ev.Context))
		}
	case "agent_session_stopped":
		return a.stopped(ctx, w, ev)
	}
	return nil
}

// stopped stops the turn running in the session's thread and takes the
// session out of processing (Slack does not, by itself).
func (a *Adapter) stopped(ctx context.Context, w *workspace, ev *agentEvent) error {
	if ev.Channel == "" {
		return nil
	}
	if a.opts.Stopper != nil {
		subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
		defer cancel()
		req := &core.StopRequest{Platform: PlatformName, Workspace: w.team, Channel: ev.Channel, Thread: ev.ThreadTS, UserID: ev.User}
		n, err := a.opts.Stopper.Stop(subCtx, req)
		if err == nil && n == 0 && strings.HasPrefix(ev.Channel, "D") && ev.ThreadTS != "" {
			// A DM's conversation may be bound to the DM itself.
			req.Thread = ""
			n, err = a.opts.Stopper.Stop(subCtx, req)
		}
		if err != nil {
			return fmt.Errorf("stopping the turn in %s/%s: %w", ev.Channel, ev.ThreadTS, err)
		}
		a.log.InfoContext(ctx, "slack stop button", "channel", ev.Channel, "thread_ts", ev.ThreadTS, "user_id", ev.User, "turns", n)
	}
	to := bots.Target{Platform: PlatformName, Workspace: w.team, Channel: ev.Channel, Thread: ev.ThreadTS}
	a.background(func(ctx context.Context) { a.sessions.set(ctx, a, w, to, slack.AgentSessionStatusActive) })
	return nil
}

// sessionStatus remembers which agent sessions are processing, so the
// status is set once per change rather than with every status line.
type sessionStatus struct {
	mu  sync.Mutex
	now map[string]string // channel/thread → status
}

func (s *sessionStatus) set(ctx context.Context, a *Adapter, w *workspace, to bots.Target, status string) {
	key := to.Channel + "/" + to.Thread
	s.mu.Lock()
	if s.now == nil {
		s.now = map[string]string{}
	}
	same := s.now[key] == status
	if status == slack.AgentSessionStatusActive {
		delete(s.now, key)
	} else {
		s.now[key] = status
	}
	if len(s.now) > 4096 {
		clear(s.now)
	}
	s.mu.Unlock()
	if same {
		return
	}
	params := slack.AgentSessionSetStatusParameters{Status: status, ChannelID: to.Channel, ThreadTS: to.Thread}
	err := a.retry(ctx, "agents.sessions.setStatus", func(ctx context.Context) error {
		_, err := w.api.SetAgentSessionStatusContext(ctx, params)
		return err
	})
	if err != nil {
		a.log.DebugContext(ctx, "setting the agent session status", "channel", to.Channel, "thread_ts", to.Thread, "status", status, "err", err)
	}
}

// ackReaction adds the acknowledgement reaction to a message taken up.
func (a *Adapter) ackReaction(ctx context.Context, w *workspace, channel, ts string) {
	if a.opts.AckReaction == "" {
		return
	}
	err := a.retry(ctx, "reactions.add", func(ctx context.Context) error {
		return w.api.AddReactionContext(ctx, a.opts.AckReaction, slack.NewRefToMessage(channel, ts))
	})
	if err != nil && !strings.Contains(err.Error(), "already_reacted") {
		a.log.WarnContext(ctx, "adding the acknowledgement reaction", "channel", channel, "ts", ts, "err", err)
	}
}

// MarkDone implements bots.DoneMarker: once a message taken up has its
// reply, the acknowledgement reaction gives way to the done one. Both
// calls are idempotent (already_reacted, no_reaction), so a turn retried
// after a crash marks the message again harmlessly.
func (a *Adapter) MarkDone(ctx context.Context, to bots.Target, ts string) error {
	if a.opts.AckReaction == "" || ts == "" {
		return nil
	}
	w, channel, err := a.target(ctx, to)
	if err != nil {
		return fmt.Errorf("marking slack message %s done: %w", ts, err)
	}
	ref := slack.NewRefToMessage(channel, ts)
	if a.opts.DoneReaction != "" {
		err := a.retry(ctx, "reactions.add", func(ctx context.Context) error {
			return w.api.AddReactionContext(ctx, a.opts.DoneReaction, ref)
		})
		if err != nil && !strings.Contains(err.Error(), "already_reacted") {
			return fmt.Errorf("adding the done reaction to %s: %w", ts, err)
		}
	}
	err = a.retry(ctx, "reactions.remove", func(ctx context.Context) error {
		return w.api.RemoveReactionContext(ctx, a.opts.AckReaction, ref)
	})
	if err != nil && !strings.Contains(err.Error(), "no_reaction") {
		return fmt.Errorf("removing the acknowledgement reaction from %s: %w", ts, err)
	}
	return nil
}

// Home is what the App Home tab shows a person: their agents, their
// schedules and the approvals waiting for them, one line each.
type Home struct {
	Agents    []string
	Schedules []string
	Approvals []string
}

// publishHome shows the person's Home tab (views.publish).
func (a *Adapter) publishHome(ctx context.Context, w *workspace, user, dm string) {
	h, err := a.opts.HomeFunc(ctx, w.team, user, dm)
	if err != nil {
		a.log.WarnContext(ctx, "reading what the home tab shows", "user_id", user, "err", err)
		return
	}
	view := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: homeBlocks(h)}}
	err = a.retry(ctx, "views.publish", func(ctx context.Context) error {
		_, err := w.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: view})
		return err
	})
	if err != nil {
		a.log.WarnContext(ctx, "publishing the home tab", "user_id", user, "err", err)
	}
}

// homeBlocks lays the Home tab out: a header and a list per section, each
// within Slack's block limits.
func homeBlocks(h *Home) []slack.Block {
	var blocks []slack.Block
	section := func(title, empty string, lines []string) {
		blocks = append(blocks, slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, title, false, false)))
		text := empty
		if len(lines) > 0 {
			text = "• " + strings.Join(lines, "\n• ")
		}
		blocks = append(blocks, sectionBlock(truncateRunes(mrkdwnEscape(text), slacklimit.SectionText)))
	}
	section("Your agents", "No agents yet.", h.Agents)
	section("Your schedules", "Nothing scheduled.", h.Schedules)
	section("Waiting for you", "No approvals waiting.", h.Approvals)
	return blocks
}

// mrkdwnEscape escapes the characters mrkdwn reads as markup.
func mrkdwnEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
