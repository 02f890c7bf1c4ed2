package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/discord/discordcard"
	"github.com/switchboardhq/switchboard/bots/voicenote"
	"github.com/switchboardhq/switchboard/core"
)

// Options configures an Adapter.
type Options struct {
	// Token is the bot token (DISCORD_BOT_TOKEN), with or without "Bot ".
	// Required.
	Token string
	// APIURL replaces https://discord.com for REST calls
	// (DISCORD_API_URL; tests point it at internal/discordtest). The gateway
	// URL then comes from that server's GET /gateway. Default: Discord.
	APIURL string
	// PublicKey is the application's hex Ed25519 public key
	// (DISCORD_PUBLIC_KEY). It turns on POST /discord/interactions (Routes).
	PublicKey string
	// ApplicationID is used to register slash commands. Default: the
	// application id from the gateway's READY.
	ApplicationID string
	// CommandGuildID registers the slash commands in one guild (instant, for
	// development) instead of globally.
	CommandGuildID string

	// Channels are channel ids where every message is addressed to the bot,
	// mention or not; threads under them count too.
	Channels []string
	// ThreadOnMention are channel ids where a top-level message addressed to
	// the bot starts a thread, and the answer goes there.
	ThreadOnMention []string
	// AllowBots passes other bots' (and webhooks') messages to core, where
	// the loop guard may refuse them. The bot's own messages and those of
	// the application's webhooks (the agents' posts) are always dropped.
	AllowBots bool
	// ThreadOnEveryMention starts a thread on a top-level question in every
	// channel, as ThreadOnMention does in the listed ones.
	ThreadOnEveryMention bool
	// IgnoreChannels are channel ids whose messages (and those of threads
	// under them) never reach core.
	IgnoreChannels []string
	// ReplyIsMention makes a reply to the bot's or an agent's message
	// addressed to the bot, like a mention.
	ReplyIsMention bool
	// ForumPosts makes the first message of a new post in a forum channel
	// addressed to the bot: a new post is a conversation, answered in it.
	ForumPosts bool
	// ForumTags are names of forum tags given to each forum post an agent
	// answers in, where the forum has them; a tag named like the agent is
	// given too (see tagForumPost).
	ForumTags []string
	// AckReaction is an emoji the bot adds to a message it takes up (the
	// message was accepted by core, not ignored or refused). "" adds none.
	AckReaction string
	// FileMaxBytes is the largest attachment read for the model (default
	// 5 MB); FileMaxCount how many of a message's are read (default 5;
	// negative: none); FileTimeout bounds one message's downloads (10s:
	// they hold the gateway's event loop).
	FileMaxBytes int64
	FileMaxCount int
	FileTimeout  time.Duration
	// DoneReaction replaces AckReaction once the reply is delivered
	// (MarkDone); "" only removes the ack.
	DoneReaction string
	// AgentWebhooks posts each agent's replies through a webhook of the
	// channel, under the agent's name and avatar (bots.Identity). Where
	// the bot lacks Manage Webhooks it posts as itself.
	AgentWebhooks bool
	// CardsAsEmbeds draws cards as embeds only; by default a card is drawn
	// in Components V2 and falls back to embeds when it does not fit.
	CardsAsEmbeds bool

	// Submitter is core's inbound half. Required.
	Submitter core.Submitter
	// HearFunc hears a voice note: a voice message (IS_VOICE_MESSAGE), or
	// an audio file, sent to the bot is stored at once (with a Submitter
	// that has Accept), then downloaded within the file limits and handed
	// to it in the event's work item. Optional: nil passes recordings on
	// as attachments.
	HearFunc voicenote.HearFunc
	// Encoder encodes an agent's spoken reply (bots.Message.Voice) as a
	// voice message's Ogg Opus. Default: ffmpeg on PATH.
	Encoder voicenote.Encoder
	// Binder binds a guild to a Switchboard workspace when the bot joins it
	// (GUILD_CREATE), owned by the guild's owner. Optional: nil skips it.
	Binder WorkspaceBinder
	// BindTimeout bounds one binding. Default 30s.
	BindTimeout time.Duration
	// ListAgentsFunc answers /agents. Without it /agents says listing is not
	// configured.
	ListAgentsFunc func(ctx context.Context) ([]string, error)
	// CommandFunc answers /remind, the form of the typed "!remind"
	// command: it is handed the /remind options as core.Command.Fields and
	// is the same function core answers typed commands with. The reply is
	// shown privately to the person who asked. Without it /remind answers
	// RemindersPending.
	CommandFunc core.CommandFunc
	// RenderCardFunc renders Message.Card as embeds, the card's own button
	// rows and files to attach. Default: discordcard.Render with the card's
	// entry id and no sparkline images. When it fails the message's Text
	// fallback is posted.
	RenderCardFunc func(card *bots.Card) ([]*discordgo.MessageEmbed, []discordgo.MessageComponent, []*discordgo.File, error)
	// RenderCardV2Func renders Message.Card in Components V2. Default:
	// discordcard.RenderV2. An error (discordcard.ErrV2DoesNotFit) makes
	// the card go out as RenderCardFunc's embeds.
	RenderCardV2Func func(card *bots.Card) ([]discordgo.MessageComponent, []*discordgo.File, error)

	Logger *slog.Logger
	// Now is the clock (message times, interaction signature window).
	// Default time.Now.
	Now func() time.Time
	// HTTPClient is the base client for REST calls; its Transport is wrapped
	// to honour APIURL. Default: a client with a 20 s timeout.
	HTTPClient *http.Client

	// StreamUpdateInterval is the least time between two edits of a
	// streamed reply. Default and minimum 1s, Discord's comfortable rate for
	// editing one message.
	StreamUpdateInterval time.Duration
	// TypingInterval is how often the typing indicator is refreshed while a
	// status is set; Discord shows it for about 10 s. Default 8s.
	TypingInterval time.Duration
	// TypingMax stops a typing indicator nobody cleared. Default 10 minutes.
	TypingMax time.Duration
	// SubmitTimeout bounds one Submit or Act call. Default 10s.
	SubmitTimeout time.Duration
}

const minStreamInterval = time.Second

func (o *Options) withDefaults() Options {
	c := *o
	c.Token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c.Token), "Bot "))
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RenderCardFunc == nil {
		logger := c.Logger
		c.RenderCardFunc = func(card *bots.Card) ([]*discordgo.MessageEmbed, []discordgo.MessageComponent, []*discordgo.File, error) {
			return discordcard.Render(card.Stamped, discordcard.Options{EntryID: card.EntryID, Logger: logger})
		}
	}
	if c.RenderCardV2Func == nil {
		logger := c.Logger
		c.RenderCardV2Func = func(card *bots.Card) ([]discordgo.MessageComponent, []*discordgo.File, error) {
			return discordcard.RenderV2(card.Stamped, discordcard.Options{EntryID: card.EntryID, Logger: logger})
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	}
	if c.FileMaxBytes == 0 {
		c.FileMaxBytes = DefaultFileMaxBytes
	}
	if c.FileMaxCount == 0 {
		c.FileMaxCount = DefaultFileMaxCount
	}
	if c.FileTimeout == 0 {
		c.FileTimeout = 10 * time.Second
	}
	if c.StreamUpdateInterval == 0 {
		c.StreamUpdateInterval = minStreamInterval
	}
	if c.TypingInterval == 0 {
		c.TypingInterval = 8 * time.Second
	}
	if c.TypingMax == 0 {
		c.TypingMax = 10 * time.Minute
	}
	if c.SubmitTimeout == 0 {
		c.SubmitTimeout = 10 * time.Second
	}
	if c.BindTimeout == 0 {
		c.BindTimeout = 30 * time.Second
	}
	return c
}

func (o *Options) validate() error {
	var errs []error
	if o.Token == "" {
		errs = append(errs, errors.New("Options.Token is required (the bot token, DISCORD_BOT_TOKEN)"))
	}
	if o.Submitter == nil {
		errs = append(errs, errors.New("Options.Submitter is required"))
	}
	if o.APIURL != "" {
		if _, err := parseAPIURL(o.APIURL); err != nil {
			errs = append(errs, fmt.Errorf("Options.APIURL: %w", err))
		}
	}
	if o.PublicKey != "" {
		if _, err := parsePublicKey(o.PublicKey); err != nil {
			errs = append(errs, fmt.Errorf("Options.PublicKey: %w", err))
		}
	}
	if o.StreamUpdateInterval < minStreamInterval {
		errs = append(errs, fmt.Errorf("Options.StreamUpdateInterval must be at least %s, got %s", minStreamInterval, o.StreamUpdateInterval))
	}
	if o.TypingInterval <= 0 || o.TypingMax <= 0 || o.SubmitTimeout <= 0 {
		errs = append(errs, errors.New("Options.TypingInterval, TypingMax and SubmitTimeout must be positive"))
	}
	for _, id := range slices.Concat(o.Channels, o.ThreadOnMention, o.IgnoreChannels) {
		if !isSnowflake(id) {
			errs = append(errs, fmt.Errorf("Options.Channels, ThreadOnMention and IgnoreChannels take channel ids (digits), got %q", id))
		}
	}
	if o.CommandGuildID != "" && !isSnowflake(o.CommandGuildID) {
		errs = append(errs, fmt.Errorf("Options.CommandGuildID takes a guild id (digits), got %q", o.CommandGuildID))
	}
	if strings.TrimSpace(o.AckReaction) != o.AckReaction || len(o.AckReaction) > 64 {
		errs = append(errs, fmt.Errorf("Options.AckReaction must be one emoji (a unicode emoji, or name:id for a custom one), got %q", o.AckReaction))
	}
	if strings.TrimSpace(o.DoneReaction) != o.DoneReaction || len(o.DoneReaction) > 64 {
		errs = append(errs, fmt.Errorf("Options.DoneReaction must be one emoji (a unicode emoji, or name:id for a custom one), got %q", o.DoneReaction))
	}
	return errors.Join(errs...)
}

// isSnowflake reports whether s is a Discord id: digits only.
func isSnowflake(s string) bool {
	return s != "" && len(s) <= 20 && strings.Trim(s, "0123456789") == ""
}

// IsID reports whether s is a Discord id (a snowflake: digits), as
// Options.CommandGuildID and the channel options take.
func IsID(s string) bool { return isSnowflake(s) }

// CheckAPIURL says what is wrong with s as Options.APIURL, for callers
// that name the setting it came from.
func CheckAPIURL(s string) error {
	_, err := parseAPIURL(s)
	return err
}

// CheckPublicKey says what is wrong with s as Options.PublicKey (the
// application's public key, hex), for callers that name the setting it
// came from.
func CheckPublicKey(s string) error {
	_, err := parsePublicKey(s)
	return err
}

// parseAPIURL accepts an origin (http://127.0.0.1:8081) or an API base
// (http://host/api/v9/) and returns the origin-with-path that replaces
// https://discord.com.
func parseAPIURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parsing %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q must be an http(s) URL with a host", s)
	}
	p := strings.TrimSuffix(u.Path, "/")
	p = strings.TrimSuffix(p, "/api/v"+discordgo.APIVersion)
	p = strings.TrimSuffix(p, "/api")
	u.Path = p
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

func parsePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("decoding hex: %w", err)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("an Ed25519 public key is %d bytes, got %d", ed25519.PublicKeySize, len(b))
	}
	return ed25519.PublicKey(b), nil
}

// rewriteTransport sends requests for https://discord.com to APIURL.
// discordgo builds every endpoint from the package-level EndpointDiscord at
// init, so rewriting at the transport is the one place that catches all of
// them without touching global state.
type rewriteTransport struct {
	base   http.RoundTripper
	target *url.URL
}

func (t *rewriteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "discord.com" {
		return t.base.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.URL.Scheme = t.target.Scheme
	r2.URL.Host = t.target.Host
	r2.URL.Path = t.target.Path + r.URL.Path
	if r.URL.RawPath != "" {
		r2.URL.RawPath = t.target.Path + r.URL.RawPath
	}
	r2.Host = t.target.Host
	return t.base.RoundTrip(r2)
}
