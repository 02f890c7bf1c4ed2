package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"golang.org/x/time/rate"

	"github.com/switchboardhq/switchboard/bots"
)

// Platform is the adapter's name in bindings and Inbound.Platform.
const Platform = "telegram"

// Adapter connects Switchboard to a Telegram bot through the Bot API
// (github.com/go-telegram/bot for the calls; the long poll is the
// adapter's own, so the offset moves only once an update is handled).
type Adapter struct {
	opts Options
	log  *slog.Logger
	api  *tgbot.Bot
	// poll makes getUpdates calls, whose timeout is the long poll's.
	poll *http.Client

	mu      sync.Mutex
	me      *models.User
	started bool
	stopped bool
	// ctx is cancelled by Stop; the poll loop, trailing stream edits and
	// typing loops run under it, counted in wg.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	limits limiter
	// replyTo is the message a post into a reply thread answers: the
	// thread's latest message addressed to the bot (by thread key), else
	// the thread's first.
	replyTo bounded[int]
	// names are the display names of the people last seen, by user id
	// (Profile's fallback).
	names  bounded[string]
	typing typingLoops
}

var (
	_ bots.Adapter       = (*Adapter)(nil)
	_ bots.Editor        = (*Adapter)(nil)
	_ bots.Streamer      = (*Adapter)(nil)
	_ bots.StreamResumer = (*Adapter)(nil)
	_ bots.StatusSetter  = (*Adapter)(nil)
)

// New validates opts; Start connects.
func New(opts Options) (*Adapter, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("telegram: invalid options: %w", err)
	}
	a := &Adapter{opts: o, log: o.Logger}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	api, err := tgbot.New(o.Token,
		tgbot.WithSkipGetMe(),
		tgbot.WithServerURL(o.APIURL),
		tgbot.WithHTTPClient(o.HTTPClient.Timeout, o.HTTPClient),
		tgbot.WithErrorsHandler(func(err error) { a.log.Warn("telegram client", "error", redactToken(err.Error(), o.Token)) }),
		tgbot.WithDebugHandler(func(string, ...any) {}),
		tgbot.WithDefaultHandler(func(context.Context, *tgbot.Bot, *models.Update) {}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: creating the client: %w", err)
	}
	a.api = api
	poll := *o.HTTPClient
	poll.Timeout = o.PollTimeout + 15*time.Second
	a.poll = &poll
	a.limits.private = rate.Every(time.Second)
	a.limits.group = rate.Every(3 * time.Second)
	a.typing.loops = map[string]*typingLoop{}
	return a, nil
}

// Name implements bots.Adapter.
func (a *Adapter) Name() string { return Platform }

// Start learns who the bot is (getMe) and starts receiving updates: it
// registers the webhook, or starts the long poll. A token Telegram refuses
// stops the start with an error naming it.
func (a *Adapter) Start(ctx context.Context) error {
	a.mu.Lock()
	if a.started || a.stopped {
		a.mu.Unlock()
		return errors.New("telegram: Start called twice or after Stop")
	}
	a.started = true
	a.mu.Unlock()
	me, err := a.api.GetMe(ctx)
	if err != nil {
		if errors.Is(err, tgbot.ErrorUnauthorized) || errors.Is(err, tgbot.ErrorNotFound) {
			return fmt.Errorf("telegram: the bot token was refused (getMe: %s): check TELEGRAM_BOT_TOKEN", redactToken(err.Error(), a.opts.Token))
		}
		return fmt.Errorf("telegram: getMe: %s", redactToken(err.Error(), a.opts.Token))
	}
	a.mu.Lock()
	a.me = me
	a.mu.Unlock()
	if a.opts.WebhookURL != "" {
		if _, err := a.api.SetWebhook(ctx, &tgbot.SetWebhookParams{
			URL: a.opts.WebhookURL, SecretToken: a.opts.WebhookSecret,
			AllowedUpdates: allowedUpdates,
		}); err != nil {
			return fmt.Errorf("telegram: setWebhook %s: %s", a.opts.WebhookURL, redactToken(err.Error(), a.opts.Token))
		}
		a.log.InfoContext(ctx, "telegram webhook registered", "bot", me.Username, "url", a.opts.WebhookURL)
		return nil
	}
	a.log.InfoContext(ctx, "telegram long polling", "bot", me.Username)
	a.wg.Add(1)
	go a.pollLoop()
	return nil
}

// allowedUpdates are the update types the bot asks for.
var allowedUpdates = []string{"message", "callback_query"}

// Stop stops receiving updates, waits for what runs, and gives up the
// poll lease so another instance polls at once.
func (a *Adapter) Stop() {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return
	}
	a.stopped = true
	a.mu.Unlock()
	a.cancel()
	a.typing.stopAll()
	a.wg.Wait()
}

// enter counts background work so Stop waits for it; false once stopped.
func (a *Adapter) enter() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return false
	}
	a.wg.Add(1)
	return true
}

func (a *Adapter) leave() { a.wg.Done() }

// bot is who the bot is (after Start).
func (a *Adapter) bot() *models.User {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.me
}

// redactToken hides the bot token in an error (the Bot API puts it in
// every URL).
func redactToken(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "<token>")
}

// chatID parses a chat id as Telegram gives it (negative for groups).
func chatID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("telegram: %q is not a chat id", s)
	}
	return id, nil
}

// bounded is a small map of what the adapter remembers for convenience
// only (a reply target, a name): it forgets everything when it grows past
// boundedMax, so it never grows with the service's age.
type bounded[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

const boundedMax = 10000

func (b *bounded[V]) Store(k string, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= boundedMax {
		b.m = map[string]V{}
	}
	b.m[k] = v
}

func (b *bounded[V]) Load(k string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

// limiter paces the messages sent and edited in each chat within
// Telegram's limits: one a second in a private chat; twenty a minute in a
// group, after a short burst.
type limiter struct {
	private, group rate.Limit
	mu             sync.Mutex
	chats          map[string]*rate.Limiter
}

// groupBurst is how many messages a group may get at once.
const groupBurst = 3

// wait blocks until a message may go to chat.
func (l *limiter) wait(ctx context.Context, chat string) error {
	l.mu.Lock()
	if l.chats == nil || len(l.chats) > 10000 {
		l.chats = map[string]*rate.Limiter{}
	}
	lim := l.chats[chat]
	if lim == nil {
		lim = rate.NewLimiter(l.private, 1)
		if strings.HasPrefix(chat, "-") {
			lim = rate.NewLimiter(l.group, groupBurst)
		}
		l.chats[chat] = lim
	}
	l.mu.Unlock()
	return lim.Wait(ctx)
}

// call runs one Bot API call that sends to chat: it waits for the chat's
// pace, and waits out a 429's retry_after (the request was not taken, so
// sending it again cannot double it) up to Options.MaxRetryAfter.
func (a *Adapter) call(ctx context.Context, chat string, fn func() error) error {
	for attempt := 0; ; attempt++ {
		if chat != "" {
			if err := a.limits.wait(ctx, chat); err != nil {
				return err
			}
		}
		err := fn()
		var tm *tgbot.TooManyRequestsError
		if !errors.As(err, &tm) || attempt >= 3 {
			return err
		}
		wait := time.Duration(tm.RetryAfter) * time.Second
		if wait <= 0 {
			wait = time.Second
		}
		if wait > a.opts.MaxRetryAfter {
			return err
		}
		a.log.InfoContext(ctx, "telegram rate limit: waiting", "chat_id", chat, "retry_after", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// refusal marks err as bots.ErrRefused when Telegram's answer says the
// request can never succeed as it is (403: the bot was blocked or removed;
// 400: the chat is gone, the message too long, a file refused, …).
// Rate limits, 5xx and network errors are returned as they are, to be
// retried.
func refusal(err error) error {
	if err == nil || errors.Is(err, bots.ErrRefused) {
		return err
	}
	var mig *tgbot.MigrateError
	switch {
	case errors.As(err, &mig):
		return bots.Refused("the group became a supergroup with a new id; mention the bot there again", err)
	case errors.Is(err, tgbot.ErrorForbidden):
		return bots.Refused("the bot may not post in this chat (blocked, removed, or without the right to post)", err)
	case errors.Is(err, tgbot.ErrorBadRequest):
		msg := strings.ToLower(err.Error())
		switch {
		case strings.Contains(msg, "chat not found"):
			return bots.Refused("the chat was not found", err)
		case strings.Contains(msg, "too long") || strings.Contains(msg, "too big") || strings.Contains(msg, "too large"):
			return bots.Refused("it is larger than Telegram accepts", err)
		case strings.Contains(msg, "topic_closed") || strings.Contains(msg, "topic closed"):
			return bots.Refused("the topic is closed", err)
		case strings.Contains(msg, "not enough rights") || strings.Contains(msg, "have no rights"):
			return bots.Refused("the bot lacks the right to post here", err)
		}
		return bots.Refused("Telegram refused it ("+badRequestText(err)+")", err)
	}
	return err
}

// badRequestText is the description of a 400 answer.
func badRequestText(err error) string {
	s := err.Error()
	if _, after, ok := strings.Cut(s, "bad request, "); ok {
		return after
	}
	return s
}

// notModified reports Telegram's answer to an edit that changes nothing.
func notModified(err error) bool {
	return errors.Is(err, tgbot.ErrorBadRequest) && strings.Contains(err.Error(), "message is not modified")
}

// cantParse reports Telegram's answer to text whose formatting it cannot
// read: the text is sent again as plain text.
func cantParse(err error) bool {
	return errors.Is(err, tgbot.ErrorBadRequest) && strings.Contains(strings.ToLower(err.Error()), "can't parse entities")
}
