package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	telegrambot "github.com/switchboardhq/switchboard/bots/telegram"
	"github.com/switchboardhq/switchboard/store"
)

// TelegramSettings are the Telegram adapter's settings.
type TelegramSettings struct {
	// BotToken turns Telegram on (TELEGRAM_BOT_TOKEN): long polling,
	// unless WebhookSecret is set.
	BotToken string
	// WebhookSecret takes updates by webhook at
	// SWITCHBOARD_PUBLIC_URL/telegram/webhook instead
	// (TELEGRAM_WEBHOOK_SECRET).
	WebhookSecret string
	// APIURL is the Bot API server (TELEGRAM_API_URL).
	APIURL string
}

func (t *TelegramSettings) fromEnv(getenv func(string) string) {
	t.BotToken = strings.TrimSpace(getenv("TELEGRAM_BOT_TOKEN"))
	t.WebhookSecret = strings.TrimSpace(getenv("TELEGRAM_WEBHOOK_SECRET"))
	t.APIURL = strings.TrimSpace(getenv("TELEGRAM_API_URL"))
}

// telegramPollLease names the lease of the one instance that long-polls
// Telegram.
const telegramPollLease = "telegram-poll"

// telegramPollTTL is how long the poll lease outlives its last renewal.
// It is renewed before every long poll (at most PollTimeout apart), so it
// must outlast one: a dead poller's lease passes to another instance
// after it.
const telegramPollTTL = 45 * time.Second

// buildTelegram creates the Telegram adapter when TELEGRAM_BOT_TOKEN is
// set, and checks the other Telegram settings either way.
func (a *App) buildTelegram() error {
	t := a.cfg.Telegram
	if t.BotToken == "" {
		for name, v := range map[string]string{"TELEGRAM_WEBHOOK_SECRET": t.WebhookSecret, "TELEGRAM_API_URL": t.APIURL} {
			if v != "" {
				return fmt.Errorf("telegram: %s is set but TELEGRAM_BOT_TOKEN is not", name)
			}
		}
		return nil
	}
	if err := telegrambot.CheckToken(t.BotToken); err != nil {
		return fmt.Errorf("TELEGRAM_BOT_TOKEN: %w (BotFather → /token)", err)
	}
	if err := telegrambot.CheckAPIURL(t.APIURL); err != nil {
		return fmt.Errorf("TELEGRAM_API_URL: %w", err)
	}
	opts := telegrambot.Options{
		Token:     t.BotToken,
		APIURL:    t.APIURL,
		Submitter: a.Service,
		Logger:    a.log.With("platform", telegrambot.Platform),
		Now:       a.cfg.Now,
	}
	if t.WebhookSecret != "" {
		if err := telegrambot.CheckWebhookSecret(t.WebhookSecret); err != nil {
			return fmt.Errorf("TELEGRAM_WEBHOOK_SECRET: %w", err)
		}
		public := strings.TrimRight(a.cfg.Env("SWITCHBOARD_PUBLIC_URL"), "/")
		if public == "" {
			return fmt.Errorf("telegram: TELEGRAM_WEBHOOK_SECRET is set, so updates come by webhook, but SWITCHBOARD_PUBLIC_URL is not: set it to the https address Telegram reaches this server at")
		}
		opts.WebhookURL, opts.WebhookSecret = public+telegrambot.WebhookPath, t.WebhookSecret
		if err := telegrambot.CheckWebhookURL(opts.WebhookURL); err != nil {
			return fmt.Errorf("SWITCHBOARD_PUBLIC_URL (for the Telegram webhook): %w", err)
		}
	} else {
		opts.Poller = &pollLease{st: a.Store, owner: a.cfg.InstanceID, now: a.cfg.Now}
	}
	tg, err := telegrambot.New(opts)
	if err != nil {
		return fmt.Errorf("telegram (TELEGRAM_BOT_TOKEN is set): %w", err)
	}
	tg.Routes(a.Mux)
	a.Adapters = append(a.Adapters, tg)
	a.People.SetProfile(telegrambot.Platform, tg.Profile)
	return nil
}

// pollLease is the Telegram long poll's lease: the store's named lease,
// as the scheduler's leadership is.
type pollLease struct {
	st    store.Store
	owner string
	now   func() time.Time
}

func (p *pollLease) Lead(ctx context.Context) (bool, error) {
	return p.st.LeaseAcquire(ctx, &store.NamedLeaseParams{Name: telegramPollLease, Owner: p.owner, TTL: telegramPollTTL, Now: p.now()})
}

func (p *pollLease) Release(ctx context.Context) error {
	return p.st.LeaseRelease(ctx, &store.NamedLeaseParams{Name: telegramPollLease, Owner: p.owner, Now: p.now()})
}
