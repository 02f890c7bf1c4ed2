package app

import (
	"fmt"

	slackbot "github.com/switchboardhq/switchboard/bots/slack"
)

// buildPlatforms creates the adapters whose tokens are set and mounts their
// HTTP endpoints.
func (a *App) buildPlatforms() error {
	cfg := a.cfg
	if cfg.SlackBotToken != "" {
		sl, err := slackbot.New(slackbot.Options{
			BotToken:      cfg.SlackBotToken,
			AppToken:      cfg.SlackAppToken,
			SigningSecret: cfg.SlackSigningSecret,
			APIURL:        cfg.SlackAPIURL,
			Submitter:     a.Service,
			Logger:        a.log.With("platform", "slack"),
			NowFunc:       cfg.Now,
		})
		if err != nil {
			return fmt.Errorf("slack (SLACK_BOT_TOKEN is set): %w", err)
		}
		sl.Routes(a.Mux)
		a.Adapters = append(a.Adapters, sl)
	} else if cfg.SlackAppToken != "" || cfg.SlackSigningSecret != "" {
		return fmt.Errorf("slack: SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set but SLACK_BOT_TOKEN is not")
	}
	return nil
}
