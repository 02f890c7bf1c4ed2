package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core"
)

// callback is the Events API envelope, the same over HTTP and Socket Mode.
type callback struct {
	Type   string `json:"type"`
	TeamID string `json:"team_id"`
	// EnterpriseID is the Enterprise Grid organisation the event is from
	// ("" outside one): it finds an organisation-wide install for a team
	// not seen before.
	EnterpriseID string          `json:"enterprise_id"`
	EventID      string          `json:"event_id"`
	EventTime    int64           `json:"event_time"`
	Event        json.RawMessage `json:"event"`
	Challenge    string          `json:"challenge"`
}

// innerEvent holds the fields of the events the adapter reads.
type innerEvent struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Username    string `json:"username"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	Team        string `json:"team"`
	// UserTeam and SourceTeam are the author's own team: in a channel
	// shared between teams (Slack Connect) it is not the receiving one.
	UserTeam        string           `json:"user_team"`
	SourceTeam      string           `json:"source_team"`
	AssistantThread *assistantThread `json:"assistant_thread"`
	Files           []sharedFile     `json:"files"`
	// Message and PreviousMessage are the message as edited and as it was
	// (message_changed); DeletedTS is the deleted message's ts
	// (message_deleted, which carries PreviousMessage too).
	Message         *editedMessage `json:"message"`
	PreviousMessage *editedMessage `json:"previous_message"`
	DeletedTS       string         `json:"deleted_ts"`
	// Tokens are the user and bot ids whose tokens were revoked
	// (tokens_revoked).
	Tokens struct {
		OAuth []string `json:"oauth"`
		Bot   []string `json:"bot"`
	} `json:"tokens"`
}

// editedMessage is the message inside a message_changed or
// message_deleted event.
type editedMessage struct {
	User     string `json:"user"`
	BotID    string `json:"bot_id"`
	Text     string `json:"text"`
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts"`
}

type assistantThread struct {
	UserID    string `json:"user_id"`
	ChannelID string `json:"channel_id"`
	ThreadTS  string `json:"thread_ts"`
	Context   struct {
		ChannelID string `json:"channel_id"`
		TeamID    string `json:"team_id"`
	} `json:"context"`
}

// Message subtypes that are a new message someone wrote. Edits, deletions,
// joins and the like are not.
var acceptedSubtypes = map[string]bool{"": true, "file_share": true, "thread_broadcast": true, "me_message": true}

// handleCallback normalises one event_callback and hands it to core. It
// returns an error only when core failed, so the caller withholds the ack and
// Slack delivers again.
func (a *Adapter) handleCallback(ctx context.Context, cb *callback) error {
	var ev innerEvent
	if err := json.Unmarshal(cb.Event, &ev); err != nil {
		a.log.WarnContext(ctx, "dropping a slack event that does not decode", "event_id", cb.EventID, "err", err)
		return nil
	}
	team := firstOf(cb.TeamID, ev.Team)
	switch ev.Type {
	case "app_uninstalled":
		a.uninstalled(ctx, team, cb.EnterpriseID, "app_uninstalled", nil)
		return nil
	case "tokens_revoked":
		if len(ev.Tokens.Bot) > 0 {
			a.uninstalled(ctx, team, cb.EnterpriseID, "tokens_revoked", ev.Tokens.Bot)
		}
		return nil
	}
	w, err := a.workspaceOf(ctx, team, cb.EnterpriseID)
	if err != nil {
		// Not an error to retry: Slack would deliver it again forever.
		a.log.WarnContext(ctx, "dropping a slack event of a team the app is not installed in", "team_id", team, "enterprise_id", cb.EnterpriseID, "event_id", cb.EventID, "err", err)
		return nil
	}
	a.seen(w)
	if err := a.bindOrgTeam(ctx, w); err != nil {
		return err // withhold the ack: Slack delivers again
	}
	a.noteChannel(w.team, ev.Channel)
	switch ev.Type {
	case "assistant_thread_started", "assistant_thread_context_changed":
		a.assistantThreadOpened(ctx, w, &ev)
		return nil
	case "app_home_opened", "app_context_changed", "agent_session_stopped":
		var ae agentEvent
		if err := json.Unmarshal(cb.Event, &ae); err != nil {
			a.log.WarnContext(ctx, "dropping a slack agent event that does not decode", "event_id", cb.EventID, "err", err)
			return nil
		}
		return a.handleAgentEvent(ctx, w, &ae)
	case "function_executed":
		return a.handleFunctionExecuted(ctx, w, cb)
	case "app_mention", "message":
	default:
		a.log.DebugContext(ctx, "ignoring slack event", "type", ev.Type, "event_id", cb.EventID)
		return nil
	}
	if ev.Type == "message" && (ev.Subtype == "message_changed" || ev.Subtype == "message_deleted") {
		return a.handleEdit(ctx, w, cb, &ev)
	}
	in, why := a.normalise(&w.me, cb, &ev)
	if in == nil {
		a.log.DebugContext(ctx, "ignoring slack message", "reason", why, "event_id", cb.EventID, "channel", ev.Channel)
		return nil
	}
	acc, accepts := a.opts.Submitter.(accepter)
	switch {
	case accepts && hasFiles(&ev):
		// The ack waits for one durable write; the files are read, and
		// the rest of core's work done, by the event's work item after it.
		in.Deferred = core.DeferredJSON(deferred{Team: team, Files: ev.Files})
	case hasFiles(&ev):
		in.Files = a.readFiles(ctx, w, ev.Files)
		if err := a.hear(ctx, in); err != nil {
			a.log.WarnContext(ctx, "hearing a slack voice note", "event_id", cb.EventID, "err", err)
		}
	}
	if in.IsDM && in.Thread != "" && a.threads.take(in.Channel+"/"+in.Thread) {
		a.background(func(ctx context.Context) { a.titleThread(ctx, w, in.Channel, in.Thread, in.Text) })
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	var res *core.SubmitResult
	if accepts {
		res, err = acc.Accept(subCtx, in)
	} else {
		res, err = a.opts.Submitter.Submit(subCtx, in)
	}
	if err != nil {
		return fmt.Errorf("submitting slack event %s: %w", cb.EventID, err)
	}
	a.log.DebugContext(ctx, "slack message submitted", "event_id", cb.EventID, "channel", in.Channel, "accepted", res != nil && res.Accepted,
		"duplicate", res != nil && res.Duplicate, "ignored", res != nil && res.Ignored, "refused", res != nil && res.Refused)
	if res != nil && !res.Accepted {
		a.afterSubmit(ctx, in, res, w)
	}
	return nil
}

// tellRefused sends the access policy's reply to a refused message: in a
// DM as a plain message (it may carry a pairing code to keep), in a
// channel visible to the sender alone.
func (a *Adapter) tellRefused(ctx context.Context, in *core.Inbound, notice string) {
	to := bots.Target{Platform: PlatformName, Workspace: in.Workspace, Channel: in.Channel, Thread: in.Thread, UserID: in.UserID}
	if _, err := a.Post(ctx, to, &bots.Message{Text: notice, Ephemeral: !in.IsDM}); err != nil {
		a.log.WarnContext(ctx, "telling a refused slack user failed", "user_id", in.UserID, "channel", in.Channel, "err", err)
	}
}

// normalise turns a message or app_mention into an Inbound, or says why not.
func (a *Adapter) normalise(me *self, cb *callback, ev *innerEvent) (*core.Inbound, string) {
	if ev.Type == "message" && !acceptedSubtypes[ev.Subtype] && !(ev.Subtype == "bot_message" && a.opts.AllowBots) {
		return nil, "subtype " + ev.Subtype
	}
	if (ev.User != "" && ev.User == me.UserID) || (ev.BotID != "" && ev.BotID == me.BotID) {
		return nil, "own message"
	}
	if ev.BotID != "" && !a.opts.AllowBots {
		return nil, "bot message"
	}
	if ev.Channel == "" || ev.TS == "" {
		return nil, "no channel or ts"
	}
	mention := "<@" + me.UserID
	mentioned := strings.Contains(ev.Text, mention+">") || strings.Contains(ev.Text, mention+"|")
	// A signed event without an event_id is still deduped: by the message
	// itself, which a redelivery repeats.
	eventID := cb.EventID
	if eventID == "" {
		eventID = "msg:" + ev.Channel + ":" + ev.TS
	}
	in := &core.Inbound{
		Platform:  PlatformName,
		EventID:   eventID,
		Workspace: cb.TeamID,
		Channel:   ev.Channel,
		MessageID: ev.TS,
		UserID:    ev.User,
		UserName:  ev.Username,
		Text:      plainText(stripMention(ev.Text, me.UserID)),
		At:        parseTS(ev.TS),
	}
	if in.Workspace == "" {
		in.Workspace = ev.Team
	}
	if in.UserID == "" {
		in.UserID = ev.BotID
	} else {
		in.UserWorkspace = firstOf(ev.UserTeam, ev.SourceTeam)
	}
	switch {
	case ev.Type == "app_mention":
		in.Mentioned = true
		in.Thread = firstOf(ev.ThreadTS, ev.TS) // the reply goes under the mention
	case ev.ChannelType == "im":
		in.IsDM = true
		in.Mentioned = mentioned
		in.Thread = ev.ThreadTS
	default:
		if mentioned {
			// Slack sends an app_mention for this message too; that one is
			// the one core gets, so the message is not stored twice.
			return nil, "covered by app_mention"
		}
		in.Thread = firstOf(ev.ThreadTS, ev.TS)
	}
	return in, ""
}

// stripMention removes the bot's own <@U…> (or <@U…|name>) from text.
func stripMention(text, botUserID string) string {
	if botUserID == "" {
		return strings.TrimSpace(text)
	}
	prefix := "<@" + botUserID
	var b strings.Builder
	for {
		i := strings.Index(text, prefix)
		if i < 0 {
			b.WriteString(text)
			break
		}
		rest := text[i+len(prefix):]
		end := strings.IndexByte(rest, '>')
		if end < 0 || (end > 0 && rest[0] != '|') {
			b.WriteString(text[:i+len(prefix)])
			text = rest
			continue
		}
		before := strings.TrimRight(text[:i], " ")
		b.WriteString(before)
		text = strings.TrimLeft(rest[end+1:], " ")
		if r, _ := utf8.DecodeRuneInString(text); before != "" && !strings.HasSuffix(before, "\n") && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '<') {
			b.WriteByte(' ')
		}
	}
	return strings.TrimSpace(b.String())
}

// plainText undoes Slack's escaping of &, < and >, which the model should see
// as written.
func plainText(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

func parseTS(ts string) time.Time {
	f, err := strconv.ParseFloat(ts, 64)
	if err != nil {
		return time.Time{}
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e6)*1e3).UTC()
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// assistantThreadOpened offers suggested prompts in a new assistant thread
// (and again when the user moves to another channel), and remembers the
// thread so its first message can title it. The calls run after the ack.
func (a *Adapter) assistantThreadOpened(ctx context.Context, w *workspace, ev *innerEvent) {
	t := ev.AssistantThread
	if t == nil || t.ChannelID == "" || t.ThreadTS == "" {
		a.log.WarnContext(ctx, "assistant thread event without a thread", "type", ev.Type)
		return
	}
	if ev.Type == "assistant_thread_started" {
		a.threads.add(t.ChannelID + "/" + t.ThreadTS)
	}
	prompts := a.prompts(t.Context.ChannelID)
	a.background(func(ctx context.Context) {
		params := slack.AssistantThreadsSetSuggestedPromptsParameters{
			Title: "Try asking", ChannelID: t.ChannelID, ThreadTS: t.ThreadTS, Prompts: prompts,
		}
		err := a.retry(ctx, "assistant.threads.setSuggestedPrompts", func(ctx context.Context) error {
			return w.api.SetAssistantThreadsSuggestedPromptsContext(ctx, params)
		})
		if err != nil {
			a.log.WarnContext(ctx, "setting suggested prompts", "channel", t.ChannelID, "thread_ts", t.ThreadTS, "err", err)
		}
	})
}

func (a *Adapter) prompts(contextChannel string) []slack.AssistantThreadsPrompt {
	var out []slack.AssistantThreadsPrompt
	if contextChannel != "" {
		out = append(out, slack.AssistantThreadsPrompt{
			Title:   "Summarise this channel",
			Message: "Summarise the recent discussion in <#" + contextChannel + ">.",
		})
	}
	for _, p := range a.opts.SuggestedPrompts {
		if len(out) == slacklimit.SuggestedPrompts {
			break
		}
		out = append(out, slack.AssistantThreadsPrompt{Title: p.Title, Message: p.Message})
	}
	return out
}

// titleThread names an assistant thread after its first message, as it
// shows in the assistant's history.
func (a *Adapter) titleThread(ctx context.Context, w *workspace, channel, thread, text string) {
	title := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(title) > 60 {
		title = string([]rune(title)[:59]) + "…"
	}
	if title == "" {
		return
	}
	params := slack.AssistantThreadsSetTitleParameters{ChannelID: channel, ThreadTS: thread, Title: title}
	err := a.retry(ctx, "assistant.threads.setTitle", func(ctx context.Context) error {
		return w.api.SetAssistantThreadsTitleContext(ctx, params)
	})
	if err != nil {
		a.log.WarnContext(ctx, "setting assistant thread title", "channel", channel, "thread_ts", thread, "err", err)
	}
}

// uninstalled removes what an app_uninstalled or tokens_revoked event
// ends: the installation serving team (and, organisation-wide, every team
// it served) with its tokens. A tokens_revoked that names only other bot
// users than the install's own (bots) leaves it.
func (a *Adapter) uninstalled(ctx context.Context, team, enterprise, why string, bots []string) {
	if a.opts.Installations == nil {
		a.forget(ctx, team, "", why)
		return
	}
	in, err := a.opts.Installations.InstallationGet(ctx, team, enterprise)
	if err != nil {
		a.teams.mu.Lock()
		delete(a.teams.byID, team)
		a.teams.mu.Unlock()
		if !errors.Is(err, ErrNotInstalled) {
			a.log.ErrorContext(ctx, "reading the slack installation an event removes", "team_id", team, "enterprise_id", enterprise, "reason", why, "err", err)
		}
		return
	}
	if len(bots) > 0 && in.BotUserID != "" && !slices.Contains(bots, in.BotUserID) {
		a.log.InfoContext(ctx, "slack tokens revoked for another bot user; the installation stays", "team_id", team, "bot_users", bots)
		return
	}
	a.forget(ctx, team, in.TeamID, why)
}

// seenEvery is how often an installation's last event time is written:
// the admin view shows it to the minute.
const seenEvery = time.Minute

// seen records, at most once a minute per team and after the ack, that an
// event of w's team arrived; for an organisation-wide install it also
// notes the team as served by it, so posts to the team find it.
func (a *Adapter) seen(w *workspace) {
	if w.key == "" || a.opts.Installations == nil {
		return
	}
	now := a.opts.Now()
	a.teams.mu.Lock()
	last, ok := a.teams.seen[w.team]
	if ok && now.Sub(last) < seenEvery {
		a.teams.mu.Unlock()
		return
	}
	if len(a.teams.seen) > 65536 {
		clear(a.teams.seen)
	}
	a.teams.seen[w.team] = now
	a.teams.mu.Unlock()
	a.background(func(ctx context.Context) {
		if err := a.opts.Installations.InstallationSeen(ctx, w.key, w.team); err != nil {
			a.log.WarnContext(ctx, "recording a slack event's arrival", "team_id", w.team, "installation", w.key, "err", err)
		}
	})
}

// bindOrgTeam binds a team served by an organisation-wide install to a team
// workspace of its own, owned by the person who installed the app, before
// its first event reaches core (as the install binds a single team); once
// per team and process, and a team already bound keeps its workspace.
func (a *Adapter) bindOrgTeam(ctx context.Context, w *workspace) error {
	if !w.orgWide || a.opts.Binder == nil || w.team == w.key {
		return nil
	}
	a.teams.mu.Lock()
	done := a.teams.bound[w.team]
	a.teams.mu.Unlock()
	if done {
		return nil
	}
	if err := a.opts.Binder.BindWorkspace(ctx, PlatformName, w.team, "", w.installer); err != nil {
		return fmt.Errorf("binding slack team %s of organisation-wide install %s to a workspace: %w", w.team, w.key, err)
	}
	a.teams.mu.Lock()
	if len(a.teams.bound) > 65536 {
		clear(a.teams.bound)
	}
	a.teams.bound[w.team] = true
	a.teams.mu.Unlock()
	return nil
}
