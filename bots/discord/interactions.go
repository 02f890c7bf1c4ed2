package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots/mdsplit"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
)

// Slash command names.
const (
	CommandAsk    = "ask"
	CommandAgents = "agents"
	CommandRemind = "remind"
	CommandLogin  = "login"
)

// RemindersPending is what /remind answers when Options.CommandFunc is not
// set.
const RemindersPending = "Reminders arrive with the scheduler."

// Commands are the slash commands the adapter registers. Each can be used
// where the app is installed in a guild and where a person installed it for
// themselves (integration types 0 and 1), in guilds, the bot's DMs and
// other private channels (contexts 0, 1 and 2).
func Commands() []*discordgo.ApplicationCommand {
	minLen := 1
	cmds := []*discordgo.ApplicationCommand{
		{
			Name: CommandAsk, Description: "Ask an agent a question",
			Options: []*discordgo.ApplicationCommandOption{
				{Type: discordgo.ApplicationCommandOptionString, Name: "prompt", Description: "What to ask", Required: true, MinLength: &minLen, MaxLength: 4000},
				{Type: discordgo.ApplicationCommandOptionString, Name: "agent", Description: "Which agent answers (default: this channel's)", Autocomplete: true},
			},
		},
		{Name: CommandAgents, Description: "List the agents you can talk to"},
		{
			Name: CommandRemind, Description: "Have an agent remind you of something",
			Options: []*discordgo.ApplicationCommandOption{
				{Type: discordgo.ApplicationCommandOptionString, Name: "when", Description: "When, e.g. \"in 2 hours\" or \"tomorrow 9:00\"", Required: true},
				{Type: discordgo.ApplicationCommandOptionString, Name: "what", Description: "What to remind you of", Required: true},
			},
		},
		{Name: CommandLogin, Description: "Get a one-time link that signs you in to the web console"},
	}
	cmds = append(cmds, contextMenuCommands()...)
	for _, c := range cmds {
		c.IntegrationTypes = &[]discordgo.ApplicationIntegrationType{discordgo.ApplicationIntegrationGuildInstall, discordgo.ApplicationIntegrationUserInstall}
		c.Contexts = &[]discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM, discordgo.InteractionContextPrivateChannel}
	}
	return cmds
}

// maxChoices is the most autocomplete choices Discord shows.
const maxChoices = 25

// planAutocomplete answers an autocomplete interaction (type 8) at once:
// for /ask's agent option, the agents whose name starts with, then
// contains, what was typed.
func (a *Adapter) planAutocomplete(i *discordgo.Interaction) *discordgo.InteractionResponse {
	data := i.ApplicationCommandData()
	var typed string
	focused := ""
	for _, o := range data.Options {
		if o.Focused {
			focused = o.Name
			typed, _ = o.Value.(string)
		}
	}
	choices := []*discordgo.ApplicationCommandOptionChoice{}
	if data.Name == CommandAsk && focused == "agent" && a.opts.ListAgentsFunc != nil {
		ctx, cancel := context.WithTimeout(a.ctx, 2*time.Second)
		names, err := a.opts.ListAgentsFunc(ctx)
		cancel()
		if err != nil {
			a.log.WarnContext(a.ctx, "listing agents for /ask autocomplete", "err", err)
		}
		typed = strings.ToLower(strings.TrimSpace(typed))
		var prefix, inside []string
		for _, n := range names {
			l := strings.ToLower(n)
			switch {
			case strings.HasPrefix(l, typed):
				prefix = append(prefix, n)
			case strings.Contains(l, typed):
				inside = append(inside, n)
			}
		}
		for _, n := range slices.Concat(prefix, inside) {
			if len(choices) == maxChoices {
				break
			}
			choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: shorten(n, 100), Value: n})
		}
	}
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices},
	}
}

// userInstalledOnly reports whether an interaction comes from a place the
// bot cannot post in by itself: a private channel (a group DM or a DM
// between others), or a guild where only the person installed the app.
// Replies there go through the interaction's follow-ups.
func userInstalledOnly(i *discordgo.Interaction) bool {
	if i.Context == discordgo.InteractionContextPrivateChannel {
		return true
	}
	if i.GuildID == "" || i.AuthorizingIntegrationOwners == nil {
		return false
	}
	_, guildInstalled := i.AuthorizingIntegrationOwners[discordgo.ApplicationIntegrationGuildInstall]
	return !guildInstalled
}

// registerCommands replaces the application's commands with Commands() in
// one bulk overwrite, so a removed command does not linger.
func (a *Adapter) registerCommands(ctx context.Context) error {
	appID := a.applicationID()
	if appID == "" {
		return errors.New("discord: no application id (set Options.ApplicationID)")
	}
	if _, err := a.s.ApplicationCommandBulkOverwrite(appID, a.opts.CommandGuildID, Commands(), discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: registering slash commands for application %s: %w", appID, err)
	}
	return nil
}

// followUp is the work after an interaction's first response: Discord
// wants that response within 3 seconds, the rest may take longer.
type followUp func(ctx context.Context)

func (a *Adapter) onInteractionCreate(_ *discordgo.Session, ev *discordgo.InteractionCreate) {
	if !a.enter() {
		return
	}
	defer a.leave()
	i := ev.Interaction
	resp, then := a.plan(i)
	if resp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, 3*time.Second)
	err := a.s.InteractionRespond(i, resp, discordgo.WithContext(ctx))
	cancel()
	if err != nil {
		a.log.ErrorContext(a.ctx, "answering discord interaction", "interaction_id", i.ID, "type", i.Type.String(), "err", err)
		return
	}
	if then != nil {
		a.goTracked(then)
	}
}

// plan decides an interaction's first response and the follow-up work.
func (a *Adapter) plan(i *discordgo.Interaction) (*discordgo.InteractionResponse, followUp) {
	switch i.Type {
	case discordgo.InteractionPing:
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong}, nil
	case discordgo.InteractionMessageComponent:
		if cards.IsFormActionID(i.MessageComponentData().CustomID) {
			return a.planFormButton(i) // the form itself answers (forms.go)
		}
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate},
			func(ctx context.Context) { a.onButton(ctx, i) }
	case discordgo.InteractionApplicationCommand:
		return a.planCommand(i)
	case discordgo.InteractionApplicationCommandAutocomplete:
		return a.planAutocomplete(i), nil
	default:
		a.log.Debug("ignoring discord interaction", "type", i.Type.String())
		return nil, nil
	}
}

func ephemeral(text string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: text, Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()},
	}
}

func deferred(private bool) *discordgo.InteractionResponse {
	r := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource, Data: &discordgo.InteractionResponseData{}}
	if private {
		r.Data.Flags = discordgo.MessageFlagsEphemeral
	}
	return r
}

func (a *Adapter) planCommand(i *discordgo.Interaction) (*discordgo.InteractionResponse, followUp) {
	data := i.ApplicationCommandData()
	if data.CommandType == discordgo.MessageApplicationCommand || data.CommandType == discordgo.UserApplicationCommand {
		return a.planContextCommand(i, data)
	}
	opts := map[string]string{}
	for _, o := range data.Options {
		// Read the value directly: discordgo's StringValue panics on an
		// option whose value is missing or not a string (a malformed
		// interaction must not take the adapter down).
		if v, ok := o.Value.(string); ok && o.Type == discordgo.ApplicationCommandOptionString {
			opts[o.Name] = v
		}
	}
	switch data.Name {
	case CommandAsk:
		return deferred(false), func(ctx context.Context) { a.onAsk(ctx, i, opts["prompt"], opts["agent"]) }
	case CommandAgents:
		return deferred(true), func(ctx context.Context) { a.onAgents(ctx, i) }
	case CommandRemind:
		if a.opts.CommandFunc == nil {
			return ephemeral(RemindersPending), nil
		}
		return deferred(true), func(ctx context.Context) { a.onCommand(ctx, i, data.Name, opts) }
	case CommandLogin:
		if a.opts.CommandFunc == nil {
			return ephemeral("Sign-in to the web console is not available here."), nil
		}
		// Ephemeral: the link signs in as whoever holds it.
		return deferred(true), func(ctx context.Context) { a.onCommand(ctx, i, data.Name, opts) }
	default:
		return ephemeral("Unknown command /" + data.Name + "."), nil
	}
}

// editOriginal replaces the interaction's first response.
func (a *Adapter) editOriginal(ctx context.Context, i *discordgo.Interaction, text string, clearComponents bool) (*discordgo.Message, error) {
	text = mdsplit.Truncate(text, MaxMessageChars)
	e := &discordgo.WebhookEdit{Content: &text, AllowedMentions: noMentions()}
	if clearComponents {
		e.Components = &[]discordgo.MessageComponent{}
	}
	m, err := a.s.InteractionResponseEdit(i, e, discordgo.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("editing interaction %s response: %w", i.ID, err)
	}
	return m, nil
}

// tellPrivately sends an ephemeral follow-up only the clicking user sees.
func (a *Adapter) tellPrivately(ctx context.Context, i *discordgo.Interaction, text string) {
	_, err := a.s.FollowupMessageCreate(i, true, &discordgo.WebhookParams{
		Content: mdsplit.Truncate(text, MaxMessageChars), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions(),
	}, discordgo.WithContext(ctx))
	if err != nil {
		a.log.ErrorContext(ctx, "sending discord ephemeral follow-up", "interaction_id", i.ID, "err", err)
	}
}

// onButton hands a click to core and shows the outcome: the choice and who
// made it, with the buttons removed, or a private note when the click was
// refused.
func (a *Adapter) onButton(ctx context.Context, i *discordgo.Interaction) {
	data := i.MessageComponentData()
	actionID, value := decodeCustomID(data.CustomID)
	userID, userName := interactionUser(i)
	actx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	res, err := a.opts.Submitter.Act(actx, &core.Action{
		Platform: Platform, EventID: i.ID, ActionID: actionID, Value: value,
		UserID: userID, UserName: userName, At: a.now(),
	})
	cancel()
	switch {
	case errors.Is(err, core.ErrNotPending):
		a.tellPrivately(ctx, i, "This was already decided.")
		return
	case errors.Is(err, core.ErrInvalid):
		a.log.WarnContext(ctx, "discord button refused by core", "action_id", actionID, "err", err)
		a.tellPrivately(ctx, i, "This button no longer works.")
		return
	case err != nil:
		a.log.ErrorContext(ctx, "handing discord click to core", "action_id", actionID, "err", err)
		a.tellPrivately(ctx, i, "Something went wrong; your choice was not recorded. Please try again.")
		return
	case res.Refused:
		reason := res.Reason
		if reason == "" {
			reason = "You can't make this choice."
		}
		a.tellPrivately(ctx, i, reason)
		return
	case res.Duplicate && res.Settled != nil:
		a.tellPrivately(ctx, i, settledText(res.Settled))
		return
	case res.Duplicate:
		a.tellPrivately(ctx, i, "This was already decided.")
		return
	}
	label := res.Outcome // what the click did, else its button
	if label == "" {
		label = buttonLabel(i.Message, data.CustomID)
	}
	if label == "" {
		label = value
	}
	note := fmt.Sprintf("**%s** — chosen by <@%s>", label, userID)
	if i.Message != nil && i.Message.Flags&discordgo.MessageFlagsIsComponentsV2 != 0 {
		// A Components V2 message has no content: the note joins the card
		// and its buttons go.
		comps := withoutRows(i.Message.Components, note)
		if _, err := a.s.InteractionResponseEdit(i, &discordgo.WebhookEdit{Components: &comps, AllowedMentions: noMentions()}, discordgo.WithContext(ctx)); err != nil {
			a.log.ErrorContext(ctx, "showing discord choice", "interaction_id", i.ID, "err", err)
		}
		return
	}
	var original string
	if i.Message != nil {
		original = i.Message.Content
	}
	text := note
	if original != "" {
		// Keep the question, cut so the note always fits.
		room := MaxMessageChars - len([]rune(note)) - 2
		text = mdsplit.Truncate(original, room) + "\n\n" + note
	}
	if _, err := a.editOriginal(ctx, i, text, true); err != nil {
		a.log.ErrorContext(ctx, "showing discord choice", "interaction_id", i.ID, "err", err)
	}
}

// onAsk echoes the question in the deferred response and submits it; the
// answer arrives through core's delivery like any other reply.
func (a *Adapter) onAsk(ctx context.Context, i *discordgo.Interaction, prompt, agent string) {
	userID, userName := interactionUser(i)
	prompt = strings.TrimSpace(prompt)
	echo := fmt.Sprintf("<@%s> asked", userID)
	if agent != "" {
		echo += " " + agent
	}
	echo += ":\n" + quote(prompt)
	msg, err := a.editOriginal(ctx, i, echo, false)
	if err != nil {
		a.log.ErrorContext(ctx, "echoing /ask", "interaction_id", i.ID, "err", err)
		return
	}
	in := &core.Inbound{
		Platform: Platform, EventID: i.ID, Workspace: i.GuildID, Channel: i.ChannelID,
		MessageID: msg.ID, UserID: userID, UserName: userName, Text: prompt,
		IsDM: i.GuildID == "", Mentioned: true, Agent: agent, At: a.now(),
	}
	userOnly := userInstalledOnly(i)
	if userOnly {
		// The bot is not in this place: the answer goes out as the
		// interaction's follow-ups, for as long as its token lives.
		a.rememberInteraction(i.ChannelID, i)
	}
	if !in.IsDM && !userOnly {
		if info, err := a.channel(ctx, i.ChannelID); err == nil && info.thread {
			in.Channel, in.Thread = info.parentID, i.ChannelID
		} else if err == nil && slices.Contains(a.opts.ThreadOnMention, i.ChannelID) {
			msg.ChannelID, msg.GuildID = i.ChannelID, i.GuildID
			if th, ok := a.startThread(ctx, msg, prompt, userName); ok {
				in.Thread = th
			}
		}
	}
	sctx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	if _, err := a.opts.Submitter.Submit(sctx, in); err != nil {
		a.log.ErrorContext(ctx, "submitting /ask", "interaction_id", i.ID, "err", err)
		a.tellPrivately(ctx, i, "Your question could not be started. Please try again.")
	}
}

func quote(s string) string {
	return "> " + strings.ReplaceAll(s, "\n", "\n> ")
}

func (a *Adapter) onAgents(ctx context.Context, i *discordgo.Interaction) {
	text := "Listing agents is not configured."
	if a.opts.ListAgentsFunc != nil {
		names, err := a.opts.ListAgentsFunc(ctx)
		switch {
		case err != nil:
			a.log.ErrorContext(ctx, "listing agents for /agents", "err", err)
			text = "The agents could not be listed. Please try again."
		case len(names) == 0:
			text = "No agents are configured."
		default:
			text = "Agents: " + strings.Join(names, ", ")
		}
	}
	if _, err := a.editOriginal(ctx, i, text, false); err != nil {
		a.log.ErrorContext(ctx, "answering /agents", "err", err)
	}
}

// onCommand hands a command form (/remind) to Options.CommandFunc, the
// handler of typed commands, and shows its reply privately.
func (a *Adapter) onCommand(ctx context.Context, i *discordgo.Interaction, name string, fields map[string]string) {
	userID, userName := interactionUser(i)
	in := &core.Inbound{
		Platform: Platform, EventID: i.ID, Workspace: i.GuildID, Channel: i.ChannelID,
		UserID: userID, UserName: userName, Text: "/" + name,
		IsDM: i.GuildID == "", Mentioned: true, At: a.now(),
	}
	cctx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	// Every command's reply is the deferred ephemeral response: private.
	reply, err := a.opts.CommandFunc(cctx, in, &core.Command{Text: name, Fields: fields, Private: true})
	cancel()
	if err != nil {
		a.log.ErrorContext(ctx, "answering a discord command", "command", name, "interaction_id", i.ID, "err", err)
		reply = "⚠️ That command failed; please try again."
	}
	if _, err := a.editOriginal(ctx, i, reply, false); err != nil {
		a.log.ErrorContext(ctx, "showing a discord command reply", "command", name, "interaction_id", i.ID, "err", err)
	}
}

// signatureWindow is how far an interaction's timestamp may be from now;
// an older signed request is a replay.
const signatureWindow = 5 * time.Minute

// Routes adds the HTTP interactions endpoint, POST /discord/interactions,
// used when the application's Interactions Endpoint URL points at this
// service. Requests are verified with Options.PublicKey (Ed25519 over
// timestamp + body); without a key the endpoint answers 404.
func (a *Adapter) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /discord/interactions", a.serveInteractions)
}

func (a *Adapter) serveInteractions(w http.ResponseWriter, r *http.Request) {
	if a.pubKey == nil {
		http.Error(w, "discord interactions endpoint not configured (DISCORD_PUBLIC_KEY)", http.StatusNotFound)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	ts, err := strconv.ParseInt(r.Header.Get("X-Signature-Timestamp"), 10, 64)
	if err != nil || a.now().Sub(time.Unix(ts, 0)).Abs() > signatureWindow {
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	if !discordgo.VerifyInteraction(r, a.pubKey) {
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return
	}
	var i discordgo.Interaction
	// discordgo cannot decode a modal submission's Label components; the
	// form code reads those from the body (forms.go).
	modal := isModalSubmit(body)
	if err := json.Unmarshal(body, &i); err != nil && !modal {
		http.Error(w, "malformed interaction", http.StatusBadRequest)
		return
	}
	var resp *discordgo.InteractionResponse
	var then followUp
	if modal {
		resp, then = a.planFormSubmit(&i, body)
	} else {
		resp, then = a.plan(&i)
	}
	if resp == nil {
		http.Error(w, "unsupported interaction type", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(resp); err != nil {
		a.log.ErrorContext(r.Context(), "writing discord interaction response", "err", err)
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if then != nil {
		a.goTracked(then)
	}
}

// settledText tells a late clicker how the buttons were settled: "This
// approval expired at …; ask again." (the time in the reader's own zone),
// or "Already chosen by @who: choice". It is sent with no mentions
// allowed, so naming the chooser pings nobody.
func settledText(st *core.Settled) string {
	if st.Expired {
		return fmt.Sprintf("This approval expired at <t:%d:f>; ask again.", st.At.Unix())
	}
	who := st.By
	if who == "" {
		who = "someone else"
	}
	if st.Platform == Platform && st.ByUserID != "" && isSnowflake(st.ByUserID) {
		who = "<@" + st.ByUserID + ">"
	}
	text := "Already chosen by " + who
	if st.Choice != "" {
		text += ": **" + shorten(st.Choice, 200) + "**"
	}
	return text + "."
}
