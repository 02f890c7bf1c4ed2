package discord

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/core"
)

// Context-menu commands: a message's menu (Apps → "Ask about this
// message") and a person's (Apps → "Ask about this person"), registered
// with the slash commands. Discord gives an app few of these (they are
// listed by name in every menu), so there is one of each, answered by the
// channel's agent (else the default); /ask names another.
const (
	// CommandAskMessage is the message command (type 3).
	CommandAskMessage = "Ask about this message"
	// CommandAskPerson is the user command (type 2).
	CommandAskPerson = "Ask about this person"
)

// Limits of what a context-menu command hands the agent.
const (
	menuMessageRunes  = 4000
	menuQuestionRunes = 8000
)

// contextMenuCommands are the message and user commands. Their description
// is empty, as Discord requires of both types.
func contextMenuCommands() []*discordgo.ApplicationCommand {
	return []*discordgo.ApplicationCommand{
		{Type: discordgo.MessageApplicationCommand, Name: CommandAskMessage},
		{Type: discordgo.UserApplicationCommand, Name: CommandAskPerson},
	}
}

// planContextCommand answers a message or user command: a public deferred
// response for a message (the echo stays in the channel), a private one for
// a person (the answer comes by DM).
func (a *Adapter) planContextCommand(i *discordgo.Interaction, data discordgo.ApplicationCommandInteractionData) (*discordgo.InteractionResponse, followUp) {
	switch {
	case data.CommandType == discordgo.MessageApplicationCommand && data.Name == CommandAskMessage:
		if data.Resolved == nil || data.Resolved.Messages[data.TargetID] == nil {
			return ephemeral("That message could not be read."), nil
		}
		m := data.Resolved.Messages[data.TargetID]
		return deferred(false), func(ctx context.Context) { a.onAskAboutMessage(ctx, i, m) }
	case data.CommandType == discordgo.UserApplicationCommand && data.Name == CommandAskPerson:
		if data.Resolved == nil || data.Resolved.Users[data.TargetID] == nil {
			return ephemeral("That person could not be read."), nil
		}
		u := data.Resolved.Users[data.TargetID]
		var member *discordgo.Member
		if data.Resolved.Members != nil {
			member = data.Resolved.Members[data.TargetID]
		}
		return deferred(true), func(ctx context.Context) { a.onAskAboutPerson(ctx, i, u, member) }
	}
	return ephemeral("Unknown command " + data.Name + "."), nil
}

// onAskAboutMessage echoes which message was asked about, starts a thread
// on it where the channel allows (else the answer follows in the channel
// or the thread it is in), and submits the message as the question.
func (a *Adapter) onAskAboutMessage(ctx context.Context, i *discordgo.Interaction, m *discordgo.Message) {
	userID, userName := interactionUser(i)
	channel := firstNonEmpty(m.ChannelID, i.ChannelID)
	link := fmt.Sprintf("https://discord.com/channels/%s/%s/%s", firstNonEmpty(i.GuildID, "@me"), channel, m.ID)
	echo := fmt.Sprintf("<@%s> asked about [this message](%s):\n%s", userID, link, quote(shorten(menuText(m), 300)))
	msg, err := a.editOriginal(ctx, i, echo, false)
	if err != nil {
		a.log.ErrorContext(ctx, "echoing a message command", "interaction_id", i.ID, "err", err)
		return
	}
	in := &core.Inbound{
		Platform: Platform, EventID: i.ID, Workspace: i.GuildID, Channel: i.ChannelID,
		MessageID: msg.ID, UserID: userID, UserName: userName, Text: menuMessageQuestion(userID, m),
		IsDM: i.GuildID == "", Mentioned: true, At: a.now(),
	}
	userOnly := userInstalledOnly(i)
	if userOnly {
		a.rememberInteraction(i.ChannelID, i)
	}
	if !in.IsDM && !userOnly {
		info, err := a.channel(ctx, i.ChannelID)
		switch {
		case err != nil:
			a.log.WarnContext(ctx, "looking up the channel of a message command; answering in it", "channel_id", i.ChannelID, "err", err)
		case info.thread:
			in.Channel, in.Thread = info.parentID, i.ChannelID
		case slices.Contains([]discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildNews}, info.kind):
			target := *m
			target.ChannelID, target.GuildID = i.ChannelID, i.GuildID
			if th, ok := a.startThread(ctx, &target, menuText(m), userName); ok {
				in.Thread = th
			}
		}
	}
	sctx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	res, err := a.opts.Submitter.Submit(sctx, in)
	switch {
	case err != nil:
		a.log.ErrorContext(ctx, "submitting a message command", "interaction_id", i.ID, "err", err)
		a.tellPrivately(ctx, i, "Your question could not be started. Please try again.")
	case res != nil && res.Refused:
		a.tellPrivately(ctx, i, firstNonEmpty(res.Notice, "You cannot ask the agents here."))
	}
}

// menuMessageQuestion is what the agent is asked about a message: who
// asked, the message with its author, attachments and embeds.
func menuMessageQuestion(asker string, m *discordgo.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<@%s> asked you about a message in this channel (Discord's “%s”). Answer it, or help with what it asks or says.\n\nThe message", asker, CommandAskMessage)
	if m.Author != nil {
		fmt.Fprintf(&b, ", by <@%s> (%s)", m.Author.ID, displayName(m.Author, m.Member))
	}
	b.WriteString(":\n" + shorten(menuText(m), menuMessageRunes))
	return shorten(b.String(), menuQuestionRunes)
}

// menuText is a message's content, with its attachments and embeds
// named, as a person sees it.
func menuText(m *discordgo.Message) string {
	parts := []string{strings.TrimSpace(m.Content)}
	for _, at := range m.Attachments {
		if at != nil {
			parts = append(parts, "[attachment: "+at.Filename+"]")
		}
	}
	for _, e := range m.Embeds {
		if e == nil {
			continue
		}
		if t := strings.TrimSpace(e.Title + " " + e.Description); t != "" {
			parts = append(parts, "[embed: "+t+"]")
		}
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if text == "" {
		return "(no text)"
	}
	return text
}

// onAskAboutPerson asks the agent what it knows of a person, with their
// profile as Discord shows it here; the question and the answer go to the
// asker's DM with the bot, where they can go on.
func (a *Adapter) onAskAboutPerson(ctx context.Context, i *discordgo.Interaction, u *discordgo.User, member *discordgo.Member) {
	userID, userName := interactionUser(i)
	dm, err := a.dmChannel(ctx, userID)
	if err != nil {
		a.log.ErrorContext(ctx, "opening the DM for a user command", "interaction_id", i.ID, "err", err)
		if _, err := a.editOriginal(ctx, i, "I could not open a DM with you; allow direct messages from this server's members and try again.", false); err != nil {
			a.log.ErrorContext(ctx, "answering a user command", "interaction_id", i.ID, "err", err)
		}
		return
	}
	in := &core.Inbound{
		Platform: Platform, EventID: i.ID, Channel: dm, UserID: userID, UserName: userName,
		Text: menuPersonQuestion(userID, u, member, i.GuildID), IsDM: true, Mentioned: true, At: a.now(),
	}
	sctx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	res, err := a.opts.Submitter.Submit(sctx, in)
	cancel()
	reply := fmt.Sprintf("I'll tell you about <@%s> in our DM.", u.ID)
	switch {
	case err != nil:
		a.log.ErrorContext(ctx, "submitting a user command", "interaction_id", i.ID, "err", err)
		reply = "Your question could not be started. Please try again."
	case res != nil && res.Refused:
		reply = firstNonEmpty(res.Notice, "You cannot ask the agents here.")
	}
	if _, err := a.editOriginal(ctx, i, reply, false); err != nil {
		a.log.ErrorContext(ctx, "answering a user command", "interaction_id", i.ID, "err", err)
	}
}

// menuPersonQuestion is what the agent is asked about a person: their
// profile as the interaction resolved it.
func menuPersonQuestion(asker string, u *discordgo.User, member *discordgo.Member, guild string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<@%s> asked you about <@%s> (Discord's “%s”). Tell them what you know of this person that helps them: "+
		"what they work on or asked about, from what you remember and this workspace's conversations. Say so plainly when you know nothing beyond the profile.\n\nTheir profile:\n", asker, u.ID, CommandAskPerson)
	fmt.Fprintf(&b, "- username: %s\n", u.Username)
	if u.GlobalName != "" {
		fmt.Fprintf(&b, "- display name: %s\n", u.GlobalName)
	}
	if u.Bot {
		b.WriteString("- a bot account\n")
	}
	if member != nil && guild != "" {
		if member.Nick != "" {
			fmt.Fprintf(&b, "- nickname in this server: %s\n", member.Nick)
		}
		if !member.JoinedAt.IsZero() {
			fmt.Fprintf(&b, "- joined this server: %s\n", member.JoinedAt.UTC().Format("2006-01-02"))
		}
		if len(member.Roles) > 0 {
			fmt.Fprintf(&b, "- roles: %d\n", len(member.Roles))
		}
	}
	return shorten(b.String(), menuQuestionRunes)
}
