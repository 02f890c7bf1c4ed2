// Package slack is the Slack adapter: it turns Slack events (Socket Mode or
// the HTTP Events API) into core.Inbound and button clicks into core.Action,
// and posts what core asks for through the Web API with slack-go.
//
// Inbound, the adapter verifies and normalises; it never decides. Dedupe (by
// event_id), whether a message is for the bot, and conversation binding are
// core's. Core's Submit only stores and enqueues, so every HTTP request and
// Socket Mode envelope is answered well inside Slack's 3 seconds; the ack is
// sent only after Submit succeeded, so a failure makes Slack deliver again.
//
// Outbound, it implements bots.Adapter, Editor, Streamer, StatusSetter,
// DoneMarker and ThreadStarter. A model's Markdown goes out as markdown
// blocks (12,000 characters a message); other text is converted to mrkdwn;
// both are split within Slack's limits; a 429 is
// waited out (Retry-After) and the same call retried, which never posts twice
// because a rate-limited call posted nothing; posts are paced to about one per
// second per channel, Slack's documented rate for chat.postMessage.
//
// What happens on failure: a bad or stale signature is answered 401 and
// nothing reaches core; a Submit or Act error is answered 500 (HTTP) or left
// unacked (Socket Mode), and Slack retries; a dropped Socket Mode connection is
// reopened by slack-go, and Slack redelivers what was not acked.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/slackcard"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/bots/voicenote"
	"github.com/switchboardhq/switchboard/core"
)

// PlatformName is the name used in bindings and core.Inbound.Platform.
const PlatformName = "slack"

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// Limits the adapter keeps (Slack's own are in package slacklimit).
const (
	// DefaultTextLimit keeps one message's text within a section block's
	// text, so any part can also carry buttons.
	DefaultTextLimit = slacklimit.SectionText
	maxRateRetries   = 5
	signatureMaxAge  = 5 * time.Minute
	maxRequestBody   = 1 << 20
)

// SuggestedPrompt is one prompt offered when a user opens the assistant
// pane.
type SuggestedPrompt struct {
	Title   string
	Message string
}

// Options configures an Adapter.
type Options struct {
	// BotToken (xoxb-) is the single-token mode: one team's bot token.
	// Required unless Installations is set.
	BotToken string
	// Installations, when set, keeps the teams the app was installed in
	// through the OAuth flow (see OAuth): each team's events are answered,
	// and its targets posted to, with that team's token.
	Installations Installations
	// OAuth turns on the install flow (see InstallRoutes). Needs
	// Installations.
	OAuth *OAuthOptions
	// Binder binds a newly installed team to a Switchboard workspace.
	// Optional: nil skips it.
	Binder WorkspaceBinder
	// AppToken (xapp-) turns on Socket Mode.
	AppToken string
	// SigningSecret turns on the HTTP Events API (see Routes).
	SigningSecret string
	// APIURL overrides the Web API base (tests). Default DefaultAPIURL.
	APIURL string
	// Submitter is core's inbound half. Required.
	Submitter core.Submitter
	// AllowBots passes other bots' messages to core; the bot's own messages
	// are always dropped.
	AllowBots bool
	Logger    *slog.Logger
	// Now is the clock (signature window, pacing). Default time.Now.
	Now func() time.Time
	// SleepFunc waits (rate limits, pacing); it must return ctx.Err() when ctx
	// ends first. Default: a timer.
	SleepFunc  func(ctx context.Context, d time.Duration) error
	HTTPClient *http.Client

	// TextLimit is the most characters put in one message. Default 3,000.
	TextLimit int
	// PostInterval paces posts per channel. Default 1s.
	PostInterval time.Duration
	// StreamUpdateInterval is the least time between two appends to one
	// streamed message: chat.appendStream on a native stream (Tier 4, 100+
	// a minute per workspace), chat.update on a reply streamed without
	// Slack's streaming API. Deltas that come sooner wait and go together.
	// Default 1s; at least slacklimit.StreamCallInterval.
	StreamUpdateInterval time.Duration
	// StreamMaxAge is how long one streaming message takes appends; a reply
	// streamed for longer goes on in a new message, before Slack ends the
	// stream (about 5 minutes). Default 4m.
	StreamMaxAge time.Duration
	// TaskUpdates shows the turn's tool calls as task_update chunks in the
	// streamed reply.
	TaskUpdates bool
	// AgentSessions sets the agent session's status (agents.sessions.setStatus:
	// processing while a turn runs, active after), which shows Slack's stop
	// button. For apps with features.agent_view.
	AgentSessions bool
	// Stopper is told when someone presses the stop button
	// (agent_session_stopped). Optional: nil only ends the session's
	// processing status.
	Stopper core.Stopper
	// FeedbackFunc records a click on the feedback buttons under an agent's
	// reply. Optional: nil shows no feedback buttons.
	FeedbackFunc func(ctx context.Context, f *core.Feedback) error
	// CommandFunc answers the typed commands that /switchboard remind,
	// rules and grants carry (core.CommandFunc, the handler of ! commands).
	// Optional: nil answers that commands are not configured.
	CommandFunc core.CommandFunc
	// ListAgentsFunc names the agents for /switchboard agents and the
	// shortcuts' agent choice. Optional.
	ListAgentsFunc func(ctx context.Context) ([]string, error)
	// ChannelAgentFunc names the agent a channel is bound to, which answers
	// the message shortcut there without asking which (shortcuts.go).
	// Optional.
	ChannelAgentFunc func(channel string) (string, bool)
	// Asker runs the Workflow Builder step "Ask an agent" (steps.go).
	// Optional: nil fails each step with a note that steps are off.
	Asker Asker
	// StepTimeout is how long a workflow step waits for the agent's
	// answer before it fails. Default core.DefaultAskTimeout.
	StepTimeout time.Duration
	// HomeFunc reads what a person's App Home tab shows (their agents,
	// schedules and pending approvals); dm is their DM with the app.
	// Optional: nil publishes no Home tab.
	HomeFunc func(ctx context.Context, workspace, userID, dm string) (*Home, error)
	// AckReaction, when set (an emoji name such as "eyes"), is added to each
	// message taken up, and replaced by DoneReaction (none when "") once
	// the reply is delivered (MarkDone).
	AckReaction  string
	DoneReaction string
	// InlineAck stores all of a message before Slack's ack (Submit): the
	// ack waits for the binding, the entry and the turn (about a dozen
	// statements), and shared files are read before it. Default false: the
	// ack stores the event alone and the rest runs right after it
	// (core.Service.Accept), the events of one thread or DM one at a time
	// in the order they were acknowledged, so a burst is acknowledged
	// fast; a reader of the conversation right after the ack may find it
	// not yet bound. slack.ack in switchboard.yaml.
	InlineAck bool
	// FileMaxBytes is the largest shared file read for the model. Default
	// DefaultFileMaxBytes (5 MB).
	FileMaxBytes int64
	// FileMaxCount is how many files of one message are read; the others
	// are listed by name. Default DefaultFileMaxCount; negative reads none.
	FileMaxCount int
	// HearFunc hears a voice note: a Slack audio clip (subtype
	// slack_audio), or an audio file, shared with a message addressed to
	// the bot, is downloaded within the file limits and handed to it in
	// the event's work item, after the ack. Optional: nil passes
	// recordings on as files the model cannot read.
	HearFunc voicenote.HearFunc
	// Encoder encodes an agent's spoken reply (bots.Message.Voice) as an
	// audio file. Default: ffmpeg on PATH.
	Encoder voicenote.Encoder
	// FileTimeout bounds the downloads of one message's files. Default 20s.
	FileTimeout time.Duration
	// SubmitTimeout bounds a Submit or Act call made while Slack waits for
	// the answer. Default 2s (Slack gives up at 3s).
	SubmitTimeout time.Duration
	// SuggestedPrompts are offered in new assistant threads (at most 4).
	// Default: a short generic set.
	SuggestedPrompts []SuggestedPrompt
	// RenderCardFunc renders Message.Card as Block Kit and its notification
	// text. Default: slackcard.Render. When it fails, the message's Text is
	// posted instead.
	RenderCardFunc func(card *bots.Card) (blocks []slack.Block, fallback string, err error)
}

func (o *Options) validate() error {
	var errs []error
	if o.BotToken == "" && o.Installations == nil {
		errs = append(errs, errors.New("BotToken is required (or Installations, for the OAuth install flow)"))
	}
	if o.OAuth != nil {
		if o.Installations == nil {
			errs = append(errs, errors.New("OAuth needs Installations"))
		}
		if err := o.OAuth.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if o.AppToken == "" && o.SigningSecret == "" {
		errs = append(errs, errors.New("one of AppToken (Socket Mode) or SigningSecret (HTTP Events API) is required"))
	}
	if o.AppToken != "" && !strings.HasPrefix(o.AppToken, "xapp-") {
		errs = append(errs, errors.New("AppToken must be an app-level token (xapp-...)"))
	}
	if o.Submitter == nil {
		errs = append(errs, errors.New("Submitter is required"))
	}
	if o.TextLimit != 0 && (o.TextLimit < 100 || o.TextLimit > slacklimit.MessageText) {
		errs = append(errs, fmt.Errorf("TextLimit %d is outside 100..%d", o.TextLimit, slacklimit.MessageText))
	}
	if o.StreamUpdateInterval != 0 && o.StreamUpdateInterval < slacklimit.StreamCallInterval {
		errs = append(errs, fmt.Errorf("StreamUpdateInterval %s must be at least %s", o.StreamUpdateInterval, slacklimit.StreamCallInterval))
	}
	if o.StreamMaxAge < 0 || o.StreamMaxAge > slacklimit.StreamLifetimeSeconds*time.Second {
		errs = append(errs, fmt.Errorf("StreamMaxAge %s must be above 0 and below Slack's stream lifetime (%ds)", o.StreamMaxAge, slacklimit.StreamLifetimeSeconds))
	}
	if o.FileMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("FileMaxBytes %d must not be negative", o.FileMaxBytes))
	}
	if len(o.SuggestedPrompts) > slacklimit.SuggestedPrompts {
		errs = append(errs, fmt.Errorf("SuggestedPrompts has %d prompts, Slack takes at most %d", len(o.SuggestedPrompts), slacklimit.SuggestedPrompts))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SleepFunc == nil {
		o.SleepFunc = sleepTimer
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.TextLimit == 0 {
		o.TextLimit = DefaultTextLimit
	}
	if o.PostInterval == 0 {
		o.PostInterval = time.Second
	}
	if o.StreamUpdateInterval == 0 {
		o.StreamUpdateInterval = time.Second
	}
	if o.StreamMaxAge == 0 {
		o.StreamMaxAge = 4 * time.Minute
	}
	if o.SubmitTimeout == 0 {
		o.SubmitTimeout = 2 * time.Second
	}
	if o.FileMaxBytes == 0 {
		o.FileMaxBytes = DefaultFileMaxBytes
	}
	if o.FileMaxCount == 0 {
		o.FileMaxCount = DefaultFileMaxCount
	}
	if o.FileTimeout == 0 {
		o.FileTimeout = 20 * time.Second
	}
	if o.RenderCardFunc == nil {
		o.RenderCardFunc = renderCard
	}
	if o.SuggestedPrompts == nil {
		o.SuggestedPrompts = []SuggestedPrompt{
			{Title: "What can you do?", Message: "What can you help me with?"},
			{Title: "Summarise a discussion", Message: "Summarise the discussion I paste next, with decisions and open questions."},
		}
	}
}

func renderCard(c *bots.Card) ([]slack.Block, string, error) {
	if c == nil || c.Stamped == nil {
		return nil, "", errors.New("rendering a card: no stamped card")
	}
	return slackcard.Render(c.Stamped, slackcard.Options{EntryID: c.EntryID})
}

func sleepTimer(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// self is who the bot is, from auth.test.
type self struct {
	UserID string
	BotID  string
	TeamID string
}

// Adapter is the Slack platform adapter.
type Adapter struct {
	opts Options
	log  *slog.Logger
	api  *slack.Client

	me      atomic.Pointer[self] // the single-token bot, nil without BotToken
	ready   atomic.Bool
	teams   teams
	pace    *channelPacer
	dmMu    sync.Mutex
	dms     map[string]string // user id → DM channel id
	threads *titleQueue
	// sessions is the agent session status last set per thread.
	sessions sessionStatus
	// runs are the messages showing runs' progress (see ShowRun).
	runs runStreams

	mu      sync.Mutex
	started bool
	runCtx  context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

var (
	_ bots.Adapter      = (*Adapter)(nil)
	_ bots.Editor       = (*Adapter)(nil)
	_ bots.Streamer     = (*Adapter)(nil)
	_ bots.StatusSetter = (*Adapter)(nil)
)

// New checks the options and builds an adapter. Call Start before use.
func New(opts Options) (*Adapter, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("slack adapter options: %w", err)
	}
	opts.setDefaults()
	a := &Adapter{
		opts:    opts,
		log:     opts.Logger.With("platform", PlatformName),
		pace:    newChannelPacer(opts.PostInterval),
		dms:     map[string]string{},
		threads: newTitleQueue(1024),
		teams:   teams{byID: map[string]*workspace{}, channels: map[string]string{}, seen: map[string]time.Time{}, bound: map[string]bool{}},
	}
	if opts.BotToken != "" {
		a.api = a.newClient(opts.BotToken)
	}
	if acc, ok := opts.Submitter.(accepter); ok && !opts.InlineAck {
		acc.SetInboundFinisher(PlatformName, finisher{a})
	}
	return a, nil
}

// Name is "slack".
func (a *Adapter) Name() string { return PlatformName }

// Start learns who the bot is (auth.test) and, with an app token, connects
// Socket Mode. It returns once the bot is known; the connection runs until
// Stop or until ctx ends. The HTTP handlers answer 503 until Start returns.
func (a *Adapter) Start(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started {
		return errors.New("slack adapter already started")
	}
	auth := &slack.AuthTestResponse{}
	if a.api != nil {
		err := a.retry(ctx, "auth.test", func(ctx context.Context) error {
			var err error
			auth, err = a.api.AuthTestContext(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("checking the slack bot token (auth.test): %w", err)
		}
		a.me.Store(&self{UserID: auth.UserID, BotID: auth.BotID, TeamID: auth.TeamID})
	}
	a.ready.Store(true)
	a.runCtx, a.cancel = context.WithCancel(ctx)
	if a.opts.AppToken != "" {
		a.wg.Go(func() { a.runSocketMode(a.runCtx) })
	}
	if a.opts.OAuth != nil && a.opts.Installations != nil {
		a.wg.Go(func() { a.renewLoop(a.runCtx) })
	}
	a.started = true
	a.log.InfoContext(ctx, "slack adapter started", "bot_user_id", auth.UserID, "team_id", auth.TeamID,
		"socket_mode", a.opts.AppToken != "", "events_api", a.opts.SigningSecret != "")
	return nil
}

// Stop disconnects Socket Mode and waits for the adapter's goroutines
// (follow-ups to clicks, assistant thread set-up) to end.
func (a *Adapter) Stop() {
	a.mu.Lock()
	cancel := a.cancel
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	a.wg.Wait()
}

// socketAPI is the client Socket Mode connects with: only its app-level
// token is used, so without a bot token a client with none serves.
func (a *Adapter) socketAPI() *slack.Client {
	if a.api != nil {
		return a.api
	}
	return a.newClient("")
}

// background runs f on the adapter's lifetime, outside the request that
// caused it, so that Slack gets its answer first.
func (a *Adapter) background(f func(ctx context.Context)) {
	a.mu.Lock()
	ctx := a.runCtx
	a.mu.Unlock()
	if ctx == nil || ctx.Err() != nil {
		return
	}
	a.wg.Go(func() { f(ctx) })
}

// retry runs call until it is not rate limited, waiting Retry-After between
// attempts. A 429 means Slack did nothing, so repeating cannot post twice.
func (a *Adapter) retry(ctx context.Context, method string, call func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := call(ctx)
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt > maxRateRetries {
			return err
		}
		wait := max(rl.RetryAfter, time.Second)
		a.log.WarnContext(ctx, "slack rate limited; retrying", "method", method, "retry_after", wait, "attempt", attempt)
		if err := a.opts.SleepFunc(ctx, wait); err != nil {
			return fmt.Errorf("waiting out the rate limit on %s: %w", method, err)
		}
	}
}

// channelPacer spaces posts in one channel by interval: a timestamp per
// channel of the next free slot, taken before the post.
type channelPacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     map[string]time.Time
}

func newChannelPacer(interval time.Duration) *channelPacer {
	return &channelPacer{interval: interval, next: map[string]time.Time{}}
}

// reserve takes the next slot in channel and says how long to wait for it.
func (p *channelPacer) reserve(channel string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	slot := p.next[channel]
	if slot.Before(now) {
		slot = now
	}
	p.next[channel] = slot.Add(p.interval)
	if len(p.next) > 4096 {
		for ch, t := range p.next {
			if t.Before(now) {
				delete(p.next, ch)
			}
		}
	}
	return slot.Sub(now)
}

func (a *Adapter) waitTurn(ctx context.Context, channel string) error {
	if d := a.pace.reserve(channel, a.opts.Now()); d > 0 {
		if err := a.opts.SleepFunc(ctx, d); err != nil {
			return fmt.Errorf("pacing posts to %s: %w", channel, err)
		}
	}
	return nil
}

// slogOutput routes slack-go's debug output to the adapter's logger.
type slogOutput struct{ log *slog.Logger }

func (s slogOutput) Output(_ int, msg string) error {
	s.log.Debug(strings.TrimSpace(msg), "source", "slack-go")
	return nil
}

// titleQueue remembers assistant threads that were just opened, so the
// first message can name the thread. Losing it (a restart) costs a title.
type titleQueue struct {
	mu    sync.Mutex
	limit int
	keys  []string
	set   map[string]bool
}

func newTitleQueue(limit int) *titleQueue {
	return &titleQueue{limit: limit, set: map[string]bool{}}
}

func (q *titleQueue) add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.set[key] {
		return
	}
	if len(q.keys) >= q.limit {
		delete(q.set, q.keys[0])
		q.keys = q.keys[1:]
	}
	q.keys = append(q.keys, key)
	q.set[key] = true
}

// take reports whether key was waiting, and forgets it.
func (q *titleQueue) take(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.set[key] {
		return false
	}
	delete(q.set, key)
	for i, k := range q.keys {
		if k == key {
			q.keys = append(q.keys[:i], q.keys[i+1:]...)
			break
		}
	}
	return true
}
