package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core"
)

// Shortcuts: "Ask an agent" on a message (a message shortcut, whose
// answer goes in the message's thread) and anywhere in Slack (a global
// shortcut, whose answer comes by DM). Both are declared in the app
// manifest under features.shortcuts with these callback ids, and their
// modals are view_submission payloads told apart by their own callback
// ids, so other modals of the app (cards, forms) can share the
// interactivity endpoint.
const (
	// ShortcutAskMessage is the message shortcut's callback_id.
	ShortcutAskMessage = "switchboard_ask_message"
	// ShortcutAsk is the global shortcut's callback_id.
	ShortcutAsk = "switchboard_ask"

	viewAskMessage = "switchboard_ask_message_modal"
	viewAsk        = "switchboard_ask_modal"

	blockAgent    = "agent"
	blockQuestion = "question"
	actionAgent   = "agent_select"
	actionText    = "question_text"
)

// Limits of what a message shortcut hands the agent from the thread.
const (
	shortcutThreadMessages = 50
	shortcutMessageRunes   = 2000
	shortcutQuestionRunes  = 16000
	// maxSelectOptions is the most options a static select takes.
	maxSelectOptions = 100
)

// handleShortcut takes the interactions of the shortcuts and their modals;
// handled is false for any other interaction.
func (a *Adapter) handleShortcut(ctx context.Context, ic *slack.InteractionCallback) (handled bool, err error) {
	switch {
	case ic.Type == slack.InteractionTypeMessageAction && ic.CallbackID == ShortcutAskMessage:
		return true, a.messageShortcut(ctx, ic)
	case ic.Type == slack.InteractionTypeShortcut && ic.CallbackID == ShortcutAsk:
		return true, a.globalShortcut(ctx, ic)
	case ic.Type == slack.InteractionTypeViewSubmission && ic.View.CallbackID == viewAskMessage:
		return true, a.submitMessageModal(ctx, ic)
	case ic.Type == slack.InteractionTypeViewSubmission && ic.View.CallbackID == viewAsk:
		return true, a.submitAskModal(ctx, ic)
	}
	return false, nil
}

// shortcutContext is a message shortcut's message and the thread it is in,
// read after the ack (conversations.replies) when core takes the event
// with Accept.
type shortcutContext struct {
	Channel string `json:"channel"`
	// Thread is the thread's root ts (the message's own when it starts
	// none); Message is the message the shortcut was used on.
	Thread  string `json:"thread"`
	Message string `json:"message"`
	// Author and Text are the message as the payload carried it: what the
	// agent gets when the thread cannot be read.
	Author string `json:"author,omitempty"`
	Text   string `json:"text,omitempty"`
	// Asker is who used the shortcut; Question what they added in the
	// modal ("" when the shortcut asked at once).
	Asker    string `json:"asker"`
	Question string `json:"question,omitempty"`
}

// askMessageMeta is the message modal's private_metadata: where the
// answer goes once the person chose the agent.
type askMessageMeta struct {
	Team string          `json:"team"`
	Ctx  shortcutContext `json:"ctx"`
}

// messageShortcut answers "Ask an agent" on a message. When the channel
// has its own agent, or only one agent is configured, the turn starts at
// once; otherwise a modal asks which agent (and, optionally, what to ask).
func (a *Adapter) messageShortcut(ctx context.Context, ic *slack.InteractionCallback) error {
	team := firstOf(ic.Team.ID, ic.User.TeamID)
	msg := ic.Message
	sc := shortcutContext{
		Channel: ic.Channel.ID, Thread: firstOf(msg.ThreadTimestamp, msg.Timestamp), Message: msg.Timestamp,
		Author: firstOf(msg.User, msg.BotID, msg.Username), Text: msg.Text, Asker: ic.User.ID,
	}
	if sc.Channel == "" || sc.Message == "" {
		a.log.WarnContext(ctx, "message shortcut without a message; ignored", "trigger_id", ic.TriggerID)
		return nil
	}
	agent, ask := a.shortcutAgent(ctx, sc.Channel)
	if ask {
		meta, _ := json.Marshal(askMessageMeta{Team: team, Ctx: sc})
		return a.openAskModal(ctx, team, ic.TriggerID, viewAskMessage, string(meta), "Ask", "Your question about the message (optional)", false)
	}
	return a.askAboutMessage(ctx, team, "shortcut:"+firstOf(ic.TriggerID, sc.Channel+":"+sc.Message+":"+sc.Asker+":"+ic.ActionTs),
		firstOf(ic.User.Username, ic.User.Name), agent, sc)
}

// shortcutAgent picks the agent a message shortcut asks without a modal:
// the channel's own agent, or the only one. ask is true when the person
// should choose.
func (a *Adapter) shortcutAgent(ctx context.Context, channel string) (agent string, ask bool) {
	if a.opts.ChannelAgentFunc != nil {
		if name, ok := a.opts.ChannelAgentFunc(channel); ok {
			return name, false
		}
	}
	if a.opts.ListAgentsFunc == nil {
		return "", false
	}
	names, err := a.opts.ListAgentsFunc(ctx)
	if err != nil {
		a.log.WarnContext(ctx, "listing agents for a shortcut; the default agent answers", "err", err)
		return "", false
	}
	return "", len(names) > 1
}

// askAboutMessage hands a message shortcut to core: a message in the
// message's thread, addressed to agent ("" for the channel's or the
// default), whose text (the message and its thread) is read after the ack
// when core takes it with Accept.
func (a *Adapter) askAboutMessage(ctx context.Context, team, eventID, userName, agent string, sc shortcutContext) error {
	in := &core.Inbound{
		Platform: PlatformName, EventID: eventID, Workspace: team, Channel: sc.Channel, Thread: sc.Thread,
		UserID: sc.Asker, UserName: userName, Text: shortcutText(sc, nil), IsDM: strings.HasPrefix(sc.Channel, "D"),
		Mentioned: true, Agent: agent, At: a.opts.Now(),
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	var res *core.SubmitResult
	var err error
	if acc, ok := a.opts.Submitter.(accepter); ok && !a.opts.InlineAck {
		in.Deferred = core.DeferredJSON(deferred{Team: team, Shortcut: &sc})
		res, err = acc.Accept(subCtx, in)
	} else {
		if w, werr := a.workspaceFor(ctx, team); werr == nil {
			in.Text = a.shortcutQuestion(subCtx, w, &sc)
		}
		res, err = a.opts.Submitter.Submit(subCtx, in)
	}
	if err != nil {
		return fmt.Errorf("submitting the message shortcut on %s/%s: %w", sc.Channel, sc.Message, err)
	}
	if res != nil && !res.Accepted {
		a.afterSubmit(ctx, in, res, nil)
	}
	return nil
}

// shortcutQuestion reads the thread of a message shortcut and makes the
// question of it. A thread that cannot be read (the app is not in the
// channel, a missing scope) leaves the message alone as the question.
func (a *Adapter) shortcutQuestion(ctx context.Context, w *workspace, sc *shortcutContext) string {
	var msgs []slack.Message
	err := a.retry(ctx, "conversations.replies", func(ctx context.Context) error {
		var err error
		msgs, _, _, err = w.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: sc.Channel, Timestamp: sc.Thread, Limit: shortcutThreadMessages, Inclusive: true,
		})
		return err
	})
	if err != nil {
		a.log.WarnContext(ctx, "reading the thread of a message shortcut; asking about the message alone",
			"channel", sc.Channel, "thread_ts", sc.Thread, "err", err)
		return shortcutText(*sc, nil)
	}
	return shortcutText(*sc, msgs)
}

// shortcutText is the question a message shortcut puts to the agent: who
// asked, the message, the thread around it (marked where the message is),
// and what the person added.
func shortcutText(sc shortcutContext, thread []slack.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<@%s> asked you about a message in this conversation (Slack's “Ask an agent” shortcut).\n", sc.Asker)
	if q := strings.TrimSpace(sc.Question); q != "" {
		fmt.Fprintf(&b, "Their question: %s\n", q)
	} else {
		b.WriteString("They added no question: answer it, or help with what it asks or says.\n")
	}
	fmt.Fprintf(&b, "\nThe message:\n%s\n", shortcutLine(sc.Author, sc.Text))
	found := false
	if len(thread) > 1 {
		b.WriteString("\nThe thread it is in, oldest first (→ marks the message):\n")
		for _, m := range thread {
			mark := "  "
			if m.Timestamp == sc.Message {
				mark, found = "→ ", true
			}
			b.WriteString(mark + shortcutLine(firstOf(m.User, m.BotID, m.Username), m.Text) + "\n")
		}
		if !found {
			b.WriteString("(the message itself is further on than what was read)\n")
		}
	}
	return truncateRunes(plainText(b.String()), shortcutQuestionRunes)
}

func shortcutLine(author, text string) string {
	who := "someone"
	if author != "" {
		who = "<@" + author + ">"
	}
	text = strings.TrimSpace(text)
	if text == "" {
		text = "(no text: a file or an attachment)"
	}
	return who + ": " + strings.ReplaceAll(truncateRunes(text, shortcutMessageRunes), "\n", "\n    ")
}

// globalShortcut opens the modal of "Ask an agent" from anywhere: which
// agent, and the question; the answer comes by DM.
func (a *Adapter) globalShortcut(ctx context.Context, ic *slack.InteractionCallback) error {
	team := firstOf(ic.Team.ID, ic.User.TeamID)
	meta, _ := json.Marshal(askMessageMeta{Team: team})
	return a.openAskModal(ctx, team, ic.TriggerID, viewAsk, string(meta), "Ask", "Your question", true)
}

// openAskModal opens a modal (views.open, within the trigger's 3 seconds)
// with the agent to choose and a question, required or not.
func (a *Adapter) openAskModal(ctx context.Context, team, trigger, callbackID, meta, submit, label string, required bool) error {
	w, err := a.workspaceFor(ctx, team)
	if err != nil {
		a.log.WarnContext(ctx, "opening an ask modal for a team the app is not installed in", "team_id", team, "err", err)
		return nil
	}
	var names []string
	if a.opts.ListAgentsFunc != nil {
		if names, err = a.opts.ListAgentsFunc(ctx); err != nil {
			return fmt.Errorf("listing agents for the ask modal: %w", err)
		}
	}
	view := askModal(callbackID, meta, submit, label, required, names)
	err = a.retry(ctx, "views.open", func(ctx context.Context) error {
		_, err := w.api.OpenViewContext(ctx, trigger, view)
		return err
	})
	if err != nil {
		// A trigger lives 3 seconds: a retry by Slack would not help.
		a.log.WarnContext(ctx, "opening the ask modal", "callback_id", callbackID, "err", err)
	}
	return nil
}

// askModal is the modal: a select of the agents (when there is more than
// one) and the question.
func askModal(callbackID, meta, submit, label string, required bool, agents []string) slack.ModalViewRequest {
	text := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	var blocks []slack.Block
	if len(agents) > 1 {
		var opts []*slack.OptionBlockObject
		for _, n := range agents {
			if len(opts) == maxSelectOptions {
				break
			}
			opts = append(opts, slack.NewOptionBlockObject(truncateRunes(n, 75), text(truncateRunes(n, 75)), nil))
		}
		sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, text("Choose an agent"), actionAgent, opts...)
		sel.InitialOption = opts[0]
		blocks = append(blocks, slack.NewInputBlock(blockAgent, text("Agent"), nil, sel))
	}
	in := slack.NewPlainTextInputBlockElement(text("What do you want to know?"), actionText)
	in.Multiline = true
	in.MaxLength = 3000
	q := slack.NewInputBlock(blockQuestion, text(label), nil, in)
	q.Optional = !required
	blocks = append(blocks, q)
	return slack.ModalViewRequest{
		Type: slack.VTModal, CallbackID: callbackID, PrivateMetadata: meta,
		Title: text("Ask an agent"), Submit: text(submit), Close: text("Cancel"),
		Blocks: slack.Blocks{BlockSet: blocks},
	}
}

// modalValues reads the agent and the question of a submitted ask modal.
func modalValues(v *slack.View) (agent, question string) {
	if v.State == nil {
		return "", ""
	}
	agent = v.State.Values[blockAgent][actionAgent].SelectedOption.Value
	question = strings.TrimSpace(v.State.Values[blockQuestion][actionText].Value)
	return agent, question
}

// submitMessageModal starts the turn a message shortcut's modal chose.
func (a *Adapter) submitMessageModal(ctx context.Context, ic *slack.InteractionCallback) error {
	var meta askMessageMeta
	if err := json.Unmarshal([]byte(ic.View.PrivateMetadata), &meta); err != nil || meta.Ctx.Channel == "" {
		a.log.WarnContext(ctx, "ask modal without its message; ignored", "view_id", ic.View.ID, "err", err)
		return nil
	}
	agent, question := modalValues(&ic.View)
	meta.Ctx.Question = question
	meta.Ctx.Asker = firstOf(ic.User.ID, meta.Ctx.Asker)
	return a.askAboutMessage(ctx, firstOf(meta.Team, ic.Team.ID, ic.User.TeamID), "view:"+ic.View.ID,
		firstOf(ic.User.Username, ic.User.Name), agent, meta.Ctx)
}

// submitAskModal starts the turn of the global shortcut's modal: the
// question goes to the person's DM with the app, under a line saying what
// they asked, and the answer follows in that thread.
func (a *Adapter) submitAskModal(ctx context.Context, ic *slack.InteractionCallback) error {
	var meta askMessageMeta
	_ = json.Unmarshal([]byte(ic.View.PrivateMetadata), &meta)
	team := firstOf(meta.Team, ic.Team.ID, ic.User.TeamID)
	agent, question := modalValues(&ic.View)
	if question == "" {
		return nil // the input is required: Slack does not send an empty one
	}
	w, err := a.workspaceFor(ctx, team)
	if err != nil {
		a.log.WarnContext(ctx, "ask modal of a team the app is not installed in", "team_id", team, "err", err)
		return nil
	}
	dm, err := a.channelFor(ctx, w, bots.Target{Platform: PlatformName, Workspace: team, UserID: ic.User.ID})
	if err != nil {
		return fmt.Errorf("opening the DM for an ask: %w", err)
	}
	who := "an agent"
	if agent != "" {
		who = "*" + agent + "*"
	}
	var ts string
	err = a.retry(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = w.api.PostMessageContext(ctx, dm, slack.MsgOptionText(
			truncateRunes("You asked "+who+":\n>"+strings.ReplaceAll(mrkdwn.Escape(question), "\n", "\n>"), slacklimit.SectionText), false))
		return err
	})
	if err != nil {
		return fmt.Errorf("posting the question of an ask in the DM: %w", err)
	}
	in := &core.Inbound{
		Platform: PlatformName, EventID: "view:" + ic.View.ID, Workspace: team, Channel: dm, Thread: ts,
		UserID: ic.User.ID, UserName: firstOf(ic.User.Username, ic.User.Name), Text: question,
		IsDM: true, Mentioned: true, Agent: agent, At: a.opts.Now(),
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	res, err := a.opts.Submitter.Submit(subCtx, in)
	if err != nil {
		return fmt.Errorf("submitting the ask modal %s: %w", ic.View.ID, err)
	}
	a.afterSubmit(ctx, in, res, w)
	return nil
}
