package discord

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
)

// Platform is the adapter's name in bindings and Inbound.Platform.
const Platform = "discord"

// Intents are the gateway intents the adapter asks for. Message content is a
// privileged intent: it must be enabled in the Developer Portal, or Discord
// closes the gateway with 4014.
const Intents = discordgo.IntentsGuilds |
	discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages |
	discordgo.IntentMessageContent

// Adapter connects Switchboard to Discord through discordgo.
type Adapter struct {
	opts   Options
	log    *slog.Logger
	s      *discordgo.Session
	pubKey ed25519.PublicKey

	mu      sync.Mutex
	botID   string
	appID   string
	started bool
	stopped bool
	// ctx is cancelled by Stop; background work (interaction follow-ups,
	// typing loops, trailing stream edits) runs under it and is counted in
	// wg so Stop can wait for it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	typing map[string]*typingLoop
	// reconnecting is set while a reconnect loop runs.
	reconnecting bool

	chMu     sync.Mutex
	channels map[string]channelInfo

	// routes remembers how messages were sent (bot, webhook, interaction).
	routes routes
	// runs are the messages showing runs' progress (see ShowRun).
	runs runEmbeds
	// forumTags remembers the forum posts already tagged (forumtags.go).
	forumTags forumTagger
}

var (
	_ bots.Adapter      = (*Adapter)(nil)
	_ bots.Editor       = (*Adapter)(nil)
	_ bots.Streamer     = (*Adapter)(nil)
	_ bots.StatusSetter = (*Adapter)(nil)
)

// New validates opts and prepares a session; Start connects it.
func New(opts Options) (*Adapter, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("discord: invalid options: %w", err)
	}
	s, err := discordgo.New("Bot " + o.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: creating session: %w", err)
	}
	client := *o.HTTPClient
	if o.APIURL != "" {
		target, _ := parseAPIURL(o.APIURL)
		base := client.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		client.Transport = &rewriteTransport{base: base, target: target}
	}
	s.Client = &client
	s.Identify.Intents = Intents
	// Handlers run on the gateway's read goroutine, one after another, so
	// messages in a channel reach core in the order Discord sent them. Work
	// that may take long (interactions) moves to its own goroutine.
	s.SyncEvents = true
	// discordgo's own reconnect loop cannot be stopped: a drop racing with
	// Close leaves it dialling forever. The adapter reconnects itself (see
	// onDisconnect), under a context that Stop cancels; Open still RESUMEs
	// with the session id and sequence discordgo keeps.
	s.ShouldReconnectOnError = false
	s.ShouldRetryOnRateLimit = true

	a := &Adapter{
		opts:     o,
		log:      o.Logger,
		s:        s,
		appID:    o.ApplicationID,
		typing:   map[string]*typingLoop{},
		channels: map[string]channelInfo{},
	}
	if o.PublicKey != "" {
		a.pubKey, _ = parsePublicKey(o.PublicKey)
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	s.AddHandler(a.onReady)
	s.AddHandler(a.onDisconnect)
	s.AddHandler(a.onMessageCreate)
	s.AddHandler(a.onMessageUpdate)
	s.AddHandler(a.onMessageDelete)
	s.AddHandler(a.onInteractionCreate)
	s.AddHandler(a.onRawInteraction) // card forms' submissions (forms.go)
	s.AddHandler(a.onGuildCreate)
	if acc, ok := o.Submitter.(accepter); ok && o.HearFunc != nil {
		acc.SetInboundFinisher(Platform, finisher{a})
	}
	return a, nil
}

// Name implements bots.Adapter.
func (a *Adapter) Name() string { return Platform }

// Session exposes the discordgo session for wiring that needs it (tests,
// diagnostics). Do not Close it; call Stop.
func (a *Adapter) Session() *discordgo.Session { return a.s }

// Start opens the gateway (it returns once READY or RESUMED arrived) and
// registers the slash commands with a bulk overwrite.
func (a *Adapter) Start(ctx context.Context) error {
	a.mu.Lock()
	if a.started || a.stopped {
		a.mu.Unlock()
		return errors.New("discord: adapter already started")
	}
	a.started = true
	a.mu.Unlock()

	if err := a.s.Open(); err != nil {
		return fmt.Errorf("discord: opening gateway: %w", err)
	}
	if err := a.registerCommands(ctx); err != nil {
		_ = a.s.Close()
		return err
	}
	a.log.InfoContext(ctx, "discord connected", "bot_user_id", a.botUserID(), "application_id", a.applicationID())
	return nil
}

// Stop closes the gateway and waits for background work to end.
func (a *Adapter) Stop() {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return
	}
	a.stopped = true
	loops := make([]*typingLoop, 0, len(a.typing))
	for _, l := range a.typing {
		loops = append(loops, l)
	}
	a.typing = map[string]*typingLoop{}
	started := a.started
	a.mu.Unlock()

	a.cancel()
	for _, l := range loops {
		l.stop()
	}
	if started {
		if err := a.s.Close(); err != nil {
			a.log.Warn("closing discord gateway", "err", err)
		}
	}
	a.wg.Wait()
}

// enter counts a piece of background work; it reports false once Stop has
// begun, and the work must then not run.
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

// goTracked runs f in a goroutine that Stop waits for.
func (a *Adapter) goTracked(f func(ctx context.Context)) bool {
	if !a.enter() {
		return false
	}
	go func() {
		defer a.leave()
		f(a.ctx)
	}()
	return true
}

func (a *Adapter) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.User != nil {
		a.botID = r.User.ID
	}
	if a.appID == "" && r.Application != nil {
		a.appID = r.Application.ID
	}
}

// Reconnect backoff after the gateway drops.
const (
	reconnectFirstWait = time.Second
	reconnectMaxWait   = 2 * time.Minute
)

// onDisconnect starts one reconnect loop when the gateway drops (read
// error, failed heartbeat, op 7 Reconnect), unless the adapter is stopping.
func (a *Adapter) onDisconnect(_ *discordgo.Session, _ *discordgo.Disconnect) {
	a.mu.Lock()
	if a.stopped || a.reconnecting || !a.started {
		a.mu.Unlock()
		return
	}
	a.reconnecting = true
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		defer func() {
			a.mu.Lock()
			a.reconnecting = false
			a.mu.Unlock()
		}()
		a.reconnect(a.ctx)
	}()
}

func (a *Adapter) reconnect(ctx context.Context) {
	wait := reconnectFirstWait
	for ctx.Err() == nil {
		err := a.s.Open()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			if ctx.Err() != nil {
				// Stop ran while Open was dialling; do not leave a
				// connection behind it.
				_ = a.s.Close()
				return
			}
			a.log.InfoContext(ctx, "discord gateway reconnected")
			return
		}
		a.log.WarnContext(ctx, "reconnecting to discord gateway", "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(wait*2, reconnectMaxWait)
	}
}

func (a *Adapter) botUserID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botID
}

func (a *Adapter) applicationID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.appID != "" {
		return a.appID
	}
	return a.botID
}

// channelInfo is what the adapter needs to know about a channel to
// normalise a message in it.
type channelInfo struct {
	guildID  string
	parentID string
	thread   bool
	kind     discordgo.ChannelType
}

const maxCachedChannels = 10000

// channel looks a channel up in the gateway state (filled by GUILD_CREATE
// and THREAD_CREATE), then over REST, and caches the answer.
func (a *Adapter) channel(ctx context.Context, id string) (channelInfo, error) {
	a.chMu.Lock()
	info, ok := a.channels[id]
	a.chMu.Unlock()
	if ok {
		return info, nil
	}
	ch, err := a.s.State.Channel(id)
	if err != nil {
		ch, err = a.s.Channel(id, discordgo.WithContext(ctx))
		if err != nil {
			return channelInfo{}, fmt.Errorf("looking up channel %s: %w", id, err)
		}
	}
	info = channelInfo{guildID: ch.GuildID, parentID: ch.ParentID, thread: ch.IsThread(), kind: ch.Type}
	a.chMu.Lock()
	if len(a.channels) >= maxCachedChannels {
		a.channels = map[string]channelInfo{}
	}
	a.channels[id] = info
	a.chMu.Unlock()
	return info, nil
}

func (a *Adapter) rememberThread(id, parentID, guildID string) {
	a.chMu.Lock()
	a.channels[id] = channelInfo{guildID: guildID, parentID: parentID, thread: true, kind: discordgo.ChannelTypeGuildPublicThread}
	a.chMu.Unlock()
}

// restError returns Discord's JSON error code of a failed REST call, or 0.
func restErrorCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}
