package discord

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

// threadArchiveMinutes is how long a thread the bot starts stays open
// without activity (one day).
const threadArchiveMinutes = 1440

func (a *Adapter) onMessageCreate(_ *discordgo.Session, ev *discordgo.MessageCreate) {
	if !a.enter() {
		return
	}
	defer a.leave()
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.SubmitTimeout)
	defer cancel()

	in, ok := a.normalize(ctx, ev.Message)
	if !ok {
		return
	}
	var (
		res *core.SubmitResult
		err error
	)
	if acc, accepts := a.opts.Submitter.(accepter); accepts && len(in.Deferred) > 0 {
		// A voice note: the event is stored at once, and the recording
		// downloaded and heard in its work item (voice.go).
		res, err = acc.Accept(ctx, in)
	} else {
		res, err = a.opts.Submitter.Submit(ctx, in)
	}
	if err != nil {
		a.log.ErrorContext(ctx, "submitting discord message", "message_id", in.MessageID, "channel_id", in.Channel, "err", err)
		return
	}
	a.log.DebugContext(ctx, "discord message submitted", "message_id", in.MessageID, "accepted", res.Accepted,
		"conversation_id", res.ConversationID, "duplicate", res.Duplicate, "ignored", res.Ignored, "refused", res.Refused)
	if !res.Accepted {
		a.afterSubmit(ctx, in, res)
	}
}

// afterSubmit reacts to a message core took, and tells a refused sender
// why.
func (a *Adapter) afterSubmit(ctx context.Context, in *core.Inbound, res *core.SubmitResult) {
	if a.opts.AckReaction != "" && !res.Duplicate && !res.Ignored && !res.Refused {
		// The reaction says "seen, working on it"; it is a courtesy, so a
		// failure is only logged.
		channel := in.Channel
		if in.Thread != "" && in.Thread != in.MessageID {
			channel = in.Thread
		}
		if err := a.s.MessageReactionAdd(channel, in.MessageID, a.opts.AckReaction, discordgo.WithContext(ctx)); err != nil {
			a.log.WarnContext(ctx, "adding the acknowledgement reaction", "message_id", in.MessageID, "err", err)
		}
	}
	if res.Refused && res.Notice != "" {
		// Discord has no ephemeral messages outside interactions: a refusal
		// in a channel goes to the sender's DMs, one in a DM stays there.
		to := bots.Target{Platform: Platform, Workspace: in.Workspace, Channel: in.Channel, Thread: in.Thread, UserID: in.UserID}
		if _, err := a.Post(ctx, to, &bots.Message{Text: res.Notice, Ephemeral: !in.IsDM}); err != nil {
			a.log.WarnContext(ctx, "telling a refused discord user failed", "user_id", in.UserID, "channel_id", in.Channel, "err", err)
		}
	}
}

// normalize turns a MESSAGE_CREATE into an Inbound, or reports false for a
// message the bot must not see (its own, other bots' unless allowed, system
// messages).
//
// Addressing: Mentioned is true when the bot is mentioned, in a DM, and in
// a channel listed in Options.Channels (or a thread under one), because
// those messages are addressed to the bot by configuration. Core decides the
// rest (a thread the bot is engaged in) and marks the others Ignored.
//
// Threads: Channel is the parent channel and Thread the thread's channel id
// when the message is in a thread; Thread is "" otherwise. Replies to a
// Target with Thread set go to the thread.
func (a *Adapter) normalize(ctx context.Context, m *discordgo.Message) (*core.Inbound, bool) {
	if m == nil || m.Author == nil {
		return nil, false
	}
	botID := a.botUserID()
	if m.Author.ID == botID {
		return nil, false
	}
	if (m.Author.Bot || m.WebhookID != "") && !a.opts.AllowBots {
		return nil, false
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return nil, false
	}
	// The agents' own posts come back through the gateway as webhook
	// messages; taking them as input would make agents answer themselves.
	if m.WebhookID != "" && a.isOwnWebhookMessage(ctx, m) {
		return nil, false
	}
	if slices.Contains(a.opts.IgnoreChannels, m.ChannelID) {
		return nil, false
	}

	in := &core.Inbound{
		Platform:  Platform,
		EventID:   m.ID,
		Workspace: m.GuildID,
		Channel:   m.ChannelID,
		MessageID: m.ID,
		UserID:    m.Author.ID,
		UserName:  displayName(m.Author, m.Member),
		IsDM:      m.GuildID == "",
		At:        m.Timestamp,
	}
	if in.At.IsZero() {
		in.At = a.opts.Now()
	}
	mentioned := mentionsUser(m, botID) || (a.opts.ReplyIsMention && a.repliesToUs(ctx, m))
	configured := slices.Contains(a.opts.Channels, m.ChannelID)
	topLevel := true
	if !in.IsDM {
		info, err := a.channel(ctx, m.ChannelID)
		if err != nil {
			// Without the channel we cannot tell a thread from a channel;
			// treat it as a channel, which at worst answers in place.
			a.log.WarnContext(ctx, "discord channel lookup failed; treating as a channel", "channel_id", m.ChannelID, "err", err)
		} else if info.thread {
			topLevel = false
			in.Channel, in.Thread = info.parentID, m.ChannelID
			if slices.Contains(a.opts.IgnoreChannels, info.parentID) {
				return nil, false
			}
			configured = configured || slices.Contains(a.opts.Channels, info.parentID)
			// A forum post's first message has the thread's id: the new
			// post is a conversation of its own.
			if a.opts.ForumPosts && m.ID == m.ChannelID {
				if parent, err := a.channel(ctx, info.parentID); err == nil && isForum(parent.kind) {
					configured = true
				}
			}
		}
	}
	in.Mentioned = mentioned || configured || in.IsDM
	atts := m.Attachments
	if note, rest, ok := a.voiceNote(m); ok {
		// Its words are the message: the recording is heard after the
		// event is stored, never named as an attachment.
		atts = rest
		mm := *m
		mm.Attachments = rest
		in.Text = messageText(&mm, botID)
		in.Deferred = core.DeferredJSON(voiceDeferred{Voice: note})
		if _, accepts := a.opts.Submitter.(accepter); !accepts {
			a.hearNow(ctx, in)
		}
	} else {
		in.Text = messageText(m, botID)
	}
	// Handlers run on the gateway's read goroutine: only a message
	// addressed to the bot waits for its downloads; others list their
	// files by name.
	in.Files = append(in.Files, a.readAttachments(atts, in.Mentioned)...)

	threadHere := a.opts.ThreadOnEveryMention || slices.Contains(a.opts.ThreadOnMention, m.ChannelID)
	if topLevel && !in.IsDM && in.Mentioned && threadHere {
		if th, ok := a.startThread(ctx, m, in.Text, in.UserName); ok {
			in.Thread = th
		}
	}
	return in, true
}

func isForum(t discordgo.ChannelType) bool {
	return t == discordgo.ChannelTypeGuildForum || t == discordgo.ChannelTypeGuildMedia
}

// repliesToUs reports whether m replies to a message of the bot's or of
// one of the agents' webhooks.
func (a *Adapter) repliesToUs(ctx context.Context, m *discordgo.Message) bool {
	ref := m.ReferencedMessage
	if ref == nil || ref.Author == nil {
		return false
	}
	if ref.Author.ID == a.botUserID() {
		return true
	}
	r := *ref
	if r.ChannelID == "" {
		r.ChannelID = m.ChannelID
	}
	return a.isOwnWebhookMessage(ctx, &r)
}

// startThread opens a thread on the user's message for the answer.
func (a *Adapter) startThread(ctx context.Context, m *discordgo.Message, text, user string) (string, bool) {
	name := threadName(text, user)
	ch, err := a.s.MessageThreadStartComplex(m.ChannelID, m.ID, &discordgo.ThreadStart{
		Name: name, AutoArchiveDuration: threadArchiveMinutes,
	}, discordgo.WithContext(ctx))
	switch {
	case err == nil:
		a.rememberThread(ch.ID, m.ChannelID, m.GuildID)
		return ch.ID, true
	case restErrorCode(err) == discordgo.ErrCodeThreadAlreadyCreatedForThisMessage:
		// A redelivered message: the thread exists, and a thread started
		// from a message carries the message's id.
		a.rememberThread(m.ID, m.ChannelID, m.GuildID)
		return m.ID, true
	default:
		a.log.WarnContext(ctx, "starting discord thread failed; answering in the channel", "channel_id", m.ChannelID, "message_id", m.ID, "err", err)
		return "", false
	}
}

// OpenThread starts a thread on a message the bot posted (bots.ThreadOpener):
// a side thread's marker. A message that has one already gets it back (a
// thread started from a message carries the message's id).
func (a *Adapter) OpenThread(ctx context.Context, to bots.Target, ref bots.MessageRef, name string) (bots.Target, error) {
	if r := []rune(name); len(r) > 100 {
		name = string(r[:100])
	}
	info, err := a.channel(ctx, ref.Channel)
	if err != nil {
		return bots.Target{}, fmt.Errorf("discord: opening a thread: %w", err)
	}
	if info.thread {
		return bots.Target{}, fmt.Errorf("discord: message %s is in a thread already; threads do not nest", ref.ID)
	}
	ch, err := a.s.MessageThreadStartComplex(ref.Channel, ref.ID, &discordgo.ThreadStart{
		Name: name, AutoArchiveDuration: threadArchiveMinutes,
	}, discordgo.WithContext(ctx))
	id := ref.ID
	switch {
	case err == nil:
		id = ch.ID
	case restErrorCode(err) == discordgo.ErrCodeThreadAlreadyCreatedForThisMessage:
	default:
		return bots.Target{}, fmt.Errorf("discord: opening a thread on message %s: %w", ref.ID, err)
	}
	a.rememberThread(id, ref.Channel, info.guildID)
	to.Channel, to.Thread = ref.Channel, id
	return to, nil
}

// threadName is the first line of the question, cut to Discord's 100
// characters, or a neutral name.
func threadName(text, user string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		line = "Question from " + user
	}
	const maxName = 100
	if utf8.RuneCountInString(line) > maxName {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:maxName-1])) + "…"
	}
	return line
}

func mentionsUser(m *discordgo.Message, userID string) bool {
	if userID == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == userID {
			return true
		}
	}
	return strings.Contains(m.Content, "<@"+userID+">") || strings.Contains(m.Content, "<@!"+userID+">")
}

// messageText is the content with the bot's mention removed and other user
// mentions made readable, plus a line per attachment so the agent knows
// one was sent.
func messageText(m *discordgo.Message, botID string) string {
	text := m.Content
	if botID != "" {
		text = strings.NewReplacer("<@"+botID+">", "", "<@!"+botID+">", "").Replace(text)
	}
	for _, u := range m.Mentions {
		if u == nil || u.ID == botID {
			continue
		}
		name := "@" + u.Username
		if u.GlobalName != "" {
			name = "@" + u.GlobalName
		}
		text = strings.NewReplacer("<@"+u.ID+">", name, "<@!"+u.ID+">", name).Replace(text)
	}
	text = strings.TrimSpace(text)
	for _, att := range m.Attachments {
		if att == nil {
			continue
		}
		line := "[attachment: " + att.Filename + " " + att.URL + "]"
		if text == "" {
			text = line
		} else {
			text += "\n" + line
		}
	}
	return text
}

func displayName(u *discordgo.User, mem *discordgo.Member) string {
	if mem != nil && mem.Nick != "" {
		return mem.Nick
	}
	if u.GlobalName != "" {
		return u.GlobalName
	}
	return u.Username
}

// interactionUser is whoever triggered an interaction: the member's user in
// a guild, the user in a DM.
func interactionUser(i *discordgo.Interaction) (id, name string) {
	if i.Member != nil && i.Member.User != nil {
		return i.Member.User.ID, displayName(i.Member.User, i.Member)
	}
	if i.User != nil {
		return i.User.ID, displayName(i.User, nil)
	}
	return "", ""
}

func (a *Adapter) now() time.Time { return a.opts.Now() }

// MarkDone implements bots.DoneMarker: once the message taken up has its
// reply, the acknowledgement reaction gives way to the done one. The
// message is in the target's thread, or in its channel when the thread was
// started on the message itself (the thread then has the message's id) or
// there is no thread. Adding a reaction the bot has and removing one it
// has not are no errors on Discord, so a retried turn marks it again
// harmlessly.
func (a *Adapter) MarkDone(ctx context.Context, to bots.Target, messageID string) error {
	if a.opts.AckReaction == "" || messageID == "" {
		return nil
	}
	channel := to.Channel
	if to.Thread != "" && to.Thread != messageID {
		channel = to.Thread
	}
	if a.opts.DoneReaction != "" {
		if err := a.s.MessageReactionAdd(channel, messageID, a.opts.DoneReaction, discordgo.WithContext(ctx)); err != nil {
			return fmt.Errorf("adding the done reaction to discord message %s: %w", messageID, err)
		}
	}
	if err := a.s.MessageReactionRemove(channel, messageID, a.opts.AckReaction, "@me", discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("removing the acknowledgement reaction from discord message %s: %w", messageID, err)
	}
	return nil
}
