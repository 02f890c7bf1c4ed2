package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	discordbot "github.com/switchboardhq/switchboard/bots/discord"
	slackbot "github.com/switchboardhq/switchboard/bots/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// buildPlatforms creates the adapters whose tokens are set and mounts their
// HTTP endpoints.
func (a *App) buildPlatforms() error {
	cfg := a.cfg
	// The slack: block is checked whether or not Slack is on.
	agents := a.Service.Agents()
	slackCfg, err := slackbot.ConfigFrom(&agents.Slack)
	if err != nil {
		return fmt.Errorf("config %s: %w", cfg.ConfigPath, err)
	}
	if cfg.SlackBotToken != "" || cfg.SlackClientID != "" {
		on := cfg.slackOn()
		if err := cfg.checkSlackSettings(); err != nil {
			return err
		}
		installs, oauth, err := a.slackInstallOptions()
		if err != nil {
			return err
		}
		sopts := slackbot.Options{
			Installations: installs,
			OAuth:         oauth,
			Binder:        cmp.Or[slackbot.WorkspaceBinder](cfg.WorkspaceBinder, &teamBinder{st: a.Store, people: a.People}),
			BotToken:      cfg.SlackBotToken,
			AppToken:      cfg.SlackAppToken,
			SigningSecret: cfg.SlackSigningSecret,
			APIURL:        cfg.SlackAPIURL,
			Submitter:     a.Service,
			Logger:        a.log.With("platform", "slack"),
			Now:           cfg.Now,
			// The agent messaging experience, on unless the slack: block
			// turns a part off.
			AgentSessions:  true,
			TaskUpdates:    true,
			Stopper:        a.Service,
			FeedbackFunc:   a.Service.RecordFeedback,
			HomeFunc:       a.slackHome,
			CommandFunc:    a.Access.Guard(a.answerInPersonZone),
			ListAgentsFunc: a.agentNames,
			// The message shortcut asks a channel's own agent without a
			// modal; the workflow step "Ask an agent" is an ask.
			ChannelAgentFunc: a.channelAgent,
			Asker:            a.Service,
			// With an ack reaction set, it becomes ✅ once the reply is in.
			DoneReaction: "white_check_mark",
			// Audio clips are heard by the agent's transcriber, after the ack.
			HearFunc: a.Service.HearVoiceNote,
		}
		slackCfg.Apply(&sopts)
		sl, err := slackbot.New(sopts)
		if err != nil {
			return fmt.Errorf("slack (%s is set): %w", on, err)
		}
		sl.Routes(a.Mux)
		sl.InstallRoutes(a.Mux)
		a.Service.SetAskReplier(slackbot.PlatformName, sl)
		a.Adapters = append(a.Adapters, sl)
		a.People.SetProfile(slackbot.PlatformName, sl.Profile)
	} else if cfg.SlackAppToken != "" || cfg.SlackSigningSecret != "" {
		set := "SLACK_APP_TOKEN"
		if cfg.SlackAppToken == "" {
			set = "SLACK_SIGNING_SECRET"
		}
		return fmt.Errorf("slack: %s is set but neither SLACK_BOT_TOKEN nor SLACK_CLIENT_ID is", set)
	}

	// The discord: block is checked whether or not Discord is on, so a
	// mistake in it shows at once.
	discordCfg, err := discordbot.ConfigFrom(&agents.Discord)
	if err != nil {
		return fmt.Errorf("config %s: %w", cfg.ConfigPath, err)
	}
	if cfg.DiscordBotToken != "" {
		if err := cfg.checkDiscordSettings(); err != nil {
			return err
		}
		var channels []string
		// Agents post under their own names through webhooks when there is
		// more than one of them or one has a name or icon of its own; a
		// lone plain agent posts as the bot.
		webhooks := len(agents.Agents) > 1
		for _, ag := range agents.Agents {
			channels = append(channels, ag.Answers.Channels...)
			webhooks = webhooks || ag.DisplayName != "" || ag.IconURL != ""
		}
		dopts := discordbot.Options{
			Token:         cfg.DiscordBotToken,
			APIURL:        cfg.DiscordAPIURL,
			PublicKey:     cfg.DiscordPublicKey,
			ApplicationID: cfg.DiscordAppID,
			Channels:      channels,
			Submitter:     a.Service,
			// Joining a guild makes and binds its team workspace, as a
			// Slack install does for a team.
			Binder:         cmp.Or[discordbot.WorkspaceBinder](cfg.WorkspaceBinder, &teamBinder{st: a.Store, people: a.People}),
			ListAgentsFunc: a.agentNames,
			// /remind is answered by the handler of typed commands, for the
			// people the access policy admits, in the person's time zone.
			CommandFunc:    a.Access.Guard(a.answerInPersonZone),
			Logger:         a.log.With("platform", "discord"),
			Now:            cfg.Now,
			ForumPosts:     true,
			ReplyIsMention: true,
			AgentWebhooks:  webhooks,
			// With an ack reaction set, it becomes ✅ once the reply is in.
			DoneReaction: "✅",
			// Voice messages are stored on arrival and heard after.
			HearFunc: a.Service.HearVoiceNote,
		}
		discordCfg.Apply(&dopts)
		if cfg.DiscordCommandGuildID != "" {
			dopts.CommandGuildID = cfg.DiscordCommandGuildID
		}
		dc, err := discordbot.New(dopts)
		if err != nil {
			return fmt.Errorf("discord (DISCORD_BOT_TOKEN is set): %w", err)
		}
		dc.Routes(a.Mux)
		a.Adapters = append(a.Adapters, dc)
		a.People.SetProfile(discordbot.Platform, dc.Profile)
	} else if cfg.DiscordPublicKey != "" {
		return fmt.Errorf("discord: DISCORD_PUBLIC_KEY is set but DISCORD_BOT_TOKEN is not")
	}
	if err := a.buildTelegram(); err != nil {
		return err
	}
	return a.buildMatrix()
}

// slackOn names the setting that turned Slack on: the bot token, else the
// install flow's client id.
func (c *Config) slackOn() string {
	if c.SlackBotToken != "" {
		return "SLACK_BOT_TOKEN"
	}
	return "SLACK_CLIENT_ID"
}

// checkSlackSettings checks the Slack settings the adapter cannot name:
// its own errors speak of its Go options.
func (c *Config) checkSlackSettings() error {
	if c.SlackAppToken == "" && c.SlackSigningSecret == "" {
		return fmt.Errorf("slack: %s is set, so Slack is on, but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP Events API) is: set one", c.slackOn())
	}
	if c.SlackAppToken != "" && !strings.HasPrefix(c.SlackAppToken, "xapp-") {
		return errors.New("SLACK_APP_TOKEN must be an app-level token (xapp-…, under Basic Information → App-Level Tokens), not a bot or user token")
	}
	return nil
}

// checkDiscordSettings checks the Discord settings the adapter cannot
// name: its own errors speak of its Go options.
func (c *Config) checkDiscordSettings() error {
	if c.DiscordAPIURL != "" {
		if err := discordbot.CheckAPIURL(c.DiscordAPIURL); err != nil {
			return fmt.Errorf("DISCORD_API_URL: %w", err)
		}
	}
	if c.DiscordPublicKey != "" {
		if err := discordbot.CheckPublicKey(c.DiscordPublicKey); err != nil {
			return fmt.Errorf("DISCORD_PUBLIC_KEY: %w (General Information → Public Key)", err)
		}
	}
	if c.DiscordCommandGuildID != "" && !discordbot.IsID(c.DiscordCommandGuildID) {
		return fmt.Errorf("DISCORD_COMMAND_GUILD_ID: %q is not a guild id (digits)", c.DiscordCommandGuildID)
	}
	return nil
}

// answerInPersonZone answers a command form (Discord's /remind) with the
// person's time zone filled in, as core does for typed commands.
func (a *App) answerInPersonZone(ctx context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
	if in.TimeZone == "" && a.People.Keeps(in.Platform) {
		if p, err := a.People.Resolve(ctx, in.Platform, in.Workspace, in.UserID); err == nil {
			in.TimeZone = p.TimeZone
		} else {
			a.log.WarnContext(ctx, "resolving the person behind a command", "platform", in.Platform, "user_id", in.UserID, "error", err)
		}
	}
	return a.Commands.Answer(ctx, in, cmd)
}

// agentNames names the configured agents (/switchboard agents, /ask's
// autocomplete).
func (a *App) agentNames(context.Context) ([]string, error) {
	var names []string
	for _, ag := range a.Service.Agents().Agents {
		names = append(names, ag.Name)
	}
	return names, nil
}

// channelAgent names the agent a channel is bound to (answers.channels).
func (a *App) channelAgent(channel string) (string, bool) {
	if ag, ok := a.Service.Agents().ForChannel(channel); ok {
		return ag.Name, true
	}
	return "", false
}

// slackHome is what a person's Slack Home tab shows: the agents, the
// schedules they own, and the approvals waiting in their DM with the app.
func (a *App) slackHome(ctx context.Context, team, user, dm string) (*slackbot.Home, error) {
	h := &slackbot.Home{}
	for _, ag := range a.Service.Agents().Agents {
		line := ag.Name
		if ag.Role != "" {
			line += " — " + ag.Role
		}
		h.Agents = append(h.Agents, line)
	}
	scheds, err := a.Store.ScheduleList(ctx, &store.ScheduleListParams{Owner: user, States: []store.ScheduleState{store.ScheduleActive, store.SchedulePaused}, Limit: 50})
	if err != nil {
		return nil, fmt.Errorf("listing the schedules of %s: %w", user, err)
	}
	for _, sc := range scheds {
		line := fmt.Sprintf("%s %s (%s, %s)", sc.Kind, sc.Name, sc.Agent, sc.Spec)
		if sc.State != store.ScheduleActive {
			line += " — " + string(sc.State)
		}
		h.Schedules = append(h.Schedules, line)
	}
	if dm == "" {
		return h, nil
	}
	b, err := a.Store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns(slackbot.PlatformName, team, dm, "")})
	if errors.Is(err, store.ErrNotFound) {
		return h, nil
	}
	if err != nil {
		return nil, fmt.Errorf("finding the DM of %s: %w", user, err)
	}
	aps, err := a.Store.ApprovalListPending(ctx, b.ConversationID)
	if err != nil {
		return nil, fmt.Errorf("listing approvals waiting for %s: %w", user, err)
	}
	for _, ap := range aps {
		h.Approvals = append(h.Approvals, fmt.Sprintf("%s (%s), until %s", ap.Tool, ap.Kind, ap.ExpiresAt.UTC().Format("Jan 2 15:04 MST")))
	}
	return h, nil
}
