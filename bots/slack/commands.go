package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/switchboardhq/switchboard/core"
)

// SlashCommand is the app's slash command, as the manifest declares it.
const SlashCommand = "/switchboard"

// SlashSubcommands are what /switchboard takes after its name. ask goes to
// the agent like a message; agents lists the agents; the others are the
// typed commands (!remind, !rules, !grants, !help) and reach the same
// CommandFunc; login too, privately (the reply is ephemeral), with a
// one-time link to the web console.
var SlashSubcommands = []string{"ask", "agents", "remind", "rules", "grants", "login", "help"}

// slashHelp is the reply to /switchboard help and to a subcommand it does
// not know.
const slashHelp = "Usage: `/switchboard ask <question>` · `agents` · `remind <when> -- <what>` · `rules [show|set …|clear]` · `grants` · `login` · `help`. " +
	"Typed `!` commands work in messages too."

// answerSlash answers one /switchboard invocation with the text shown to
// the person who typed it (ephemeral).
func (a *Adapter) answerSlash(ctx context.Context, sc *slack.SlashCommand) string {
	if sc.Command != SlashCommand {
		return "Unknown command " + sc.Command + "."
	}
	verb, rest, _ := strings.Cut(strings.TrimSpace(sc.Text), " ")
	verb, rest = strings.ToLower(verb), strings.TrimSpace(rest)
	team := firstOf(sc.TeamID, sc.EnterpriseID)
	in := &core.Inbound{
		Platform: PlatformName, EventID: "cmd:" + firstOf(sc.TriggerID, sc.ChannelID+":"+sc.UserID+":"+sc.Text),
		Workspace: team, Channel: sc.ChannelID, UserID: sc.UserID, UserName: sc.UserName,
		IsDM: strings.HasPrefix(sc.ChannelID, "D"), Mentioned: true, At: a.opts.Now(),
	}
	subCtx, cancel := context.WithTimeout(ctx, a.opts.SubmitTimeout)
	defer cancel()
	switch verb {
	case "", "help":
		return slashHelp
	case "agents":
		if a.opts.ListAgentsFunc == nil {
			return "No agents are listed here."
		}
		names, err := a.opts.ListAgentsFunc(subCtx)
		if err != nil {
			a.log.ErrorContext(ctx, "listing agents for /switchboard agents", "err", err)
			return "⚠️ Listing the agents failed; please try again."
		}
		if len(names) == 0 {
			return "No agents are configured."
		}
		return "Agents: " + strings.Join(names, ", ") + ". Ask one with `/switchboard ask` or by mentioning it."
	case "ask":
		if rest == "" {
			return "Ask what? `/switchboard ask <question>`"
		}
		in.Text = rest
		res, err := a.opts.Submitter.Submit(subCtx, in)
		if err != nil {
			a.log.ErrorContext(ctx, "submitting /switchboard ask", "channel", sc.ChannelID, "err", err)
			return "⚠️ Your question could not be taken; please try again."
		}
		switch {
		case res.Refused:
			return firstOf(res.Notice, "You cannot ask the agents here.")
		case res.Duplicate:
			return "Already asked."
		case res.Ignored:
			return "That was not taken up."
		}
		return "Asked: “" + truncateRunes(rest, 200) + "”. The answer comes in this conversation."
	case "remind", "rules", "grants", "login":
		if a.opts.CommandFunc == nil {
			return "Commands are not configured here."
		}
		text := strings.TrimSpace(verb + " " + rest)
		in.Text = core.CommandPrefix + text
		// The answer is ephemeral: only the person who typed it sees it.
		reply, err := a.opts.CommandFunc(subCtx, in, &core.Command{Text: text, Private: true})
		if err != nil {
			a.log.ErrorContext(ctx, "answering /switchboard "+verb, "err", err)
			return "⚠️ That command failed; please try again."
		}
		return reply
	}
	return "I don't know `" + verb + "`. " + slashHelp
}

// serveCommands answers POST /slack/commands: the signed form Slack posts
// for a slash command, answered at once with an ephemeral reply.
func (a *Adapter) serveCommands(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readVerified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("command") == "" {
		http.Error(w, "not a slash command", http.StatusBadRequest)
		return
	}
	sc := &slack.SlashCommand{
		Command: form.Get("command"), Text: form.Get("text"), TeamID: form.Get("team_id"), EnterpriseID: form.Get("enterprise_id"),
		ChannelID: form.Get("channel_id"), UserID: form.Get("user_id"), UserName: form.Get("user_name"), TriggerID: form.Get("trigger_id"),
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(slashReply(a.answerSlash(r.Context(), sc)))
}

// slashReply is the immediate response to a slash command: shown to the
// person who typed it only.
func slashReply(text string) map[string]string {
	return map[string]string{"response_type": "ephemeral", "text": text}
}

// handleSlashSocket answers a slash command over Socket Mode: the reply
// rides on the ack, as Slack documents for Socket Mode.
func (a *Adapter) handleSlashSocket(ctx context.Context, client *socketmode.Client, evt socketmode.Event) {
	if evt.Request == nil {
		return
	}
	sc, ok := evt.Data.(slack.SlashCommand)
	if !ok {
		a.ack(ctx, client, evt.Request.EnvelopeID)
		return
	}
	reply := a.answerSlash(ctx, &sc)
	if err := client.AckCtx(ctx, evt.Request.EnvelopeID, slashReply(reply)); err != nil {
		a.log.WarnContext(ctx, "answering a slash command", "envelope_id", evt.Request.EnvelopeID, "err", fmt.Errorf("acking: %w", err))
	}
}
