package matrix

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

// Platform is the adapter's name in bindings and Inbound.Platform.
const Platform = "matrix"

// Defaults of Options.
const (
	DefaultStreamUpdateInterval = time.Second
	DefaultSyncTimeout          = 30 * time.Second
	DefaultLeaseTTL             = 30 * time.Second
	DefaultSubmitTimeout        = 30 * time.Second
	DefaultFileMaxBytes         = 5 << 20
	DefaultFileMaxCount         = 5
	DefaultFileTimeout          = 30 * time.Second
	// DefaultMaxMessageChars keeps an event, its body and its HTML under
	// the spec's 65,536 bytes.
	DefaultMaxMessageChars = 10000
	minStreamInterval      = 500 * time.Millisecond
)

// SyncState keeps the sync position and the right to sync across restarts
// and instances (the app keeps them in the store: a named lease and a
// saved token).
type SyncState interface {
	// Lead takes or renews the right to sync for ttl; false while another
	// instance holds it.
	Lead(ctx context.Context, ttl time.Duration) (bool, error)
	// Resign gives the right up (a graceful stop), so another instance
	// takes over at once.
	Resign(ctx context.Context) error
	// Cursor is the saved next_batch token; "" when none was saved.
	Cursor(ctx context.Context) (string, error)
	// SaveCursor saves the token to continue from.
	SaveCursor(ctx context.Context, next string) error
}

// Invite is an invitation the bot received.
type Invite struct {
	Room    string
	Inviter string
	Direct  bool
}

// Options configures an Adapter.
type Options struct {
	// HomeserverURL, UserID and AccessToken are the bot account's
	// (MATRIX_HOMESERVER_URL, MATRIX_USER_ID, MATRIX_ACCESS_TOKEN).
	HomeserverURL string
	UserID        string
	AccessToken   string

	Submitter core.Submitter
	Sync      SyncState
	// JoinFunc decides whether to accept an invite (the access policy).
	// Nil: accept none.
	JoinFunc func(ctx context.Context, inv Invite) (bool, error)

	HTTPClient *http.Client
	Logger     *slog.Logger
	Now        func() time.Time

	// StreamUpdateInterval is the least time between two edits of a
	// streamed reply (default 1s, at least 500ms).
	StreamUpdateInterval time.Duration
	// SyncTimeout is how long one /sync is held open (default 30s, and at
	// most a third of LeaseTTL, so the lease is renewed in time).
	SyncTimeout time.Duration
	// LeaseTTL is how long the right to sync lasts without renewal
	// (default 30s): after a crash, another instance syncs within it.
	LeaseTTL      time.Duration
	SubmitTimeout time.Duration
	// FileMaxBytes is the largest file read for the model (default 5 MB);
	// FileMaxCount how many of a message's are read (default 5; negative:
	// none); FileTimeout bounds one message's downloads.
	FileMaxBytes int64
	FileMaxCount int
	FileTimeout  time.Duration
	// MaxMessageChars is the longest text of one event before it is split.
	MaxMessageChars int
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 0}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.StreamUpdateInterval == 0 {
		o.StreamUpdateInterval = DefaultStreamUpdateInterval
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.SyncTimeout == 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	o.SyncTimeout = min(o.SyncTimeout, o.LeaseTTL/3)
	if o.SubmitTimeout == 0 {
		o.SubmitTimeout = DefaultSubmitTimeout
	}
	if o.FileMaxBytes == 0 {
		o.FileMaxBytes = DefaultFileMaxBytes
	}
	if o.FileMaxCount == 0 {
		o.FileMaxCount = DefaultFileMaxCount
	}
	if o.FileTimeout == 0 {
		o.FileTimeout = DefaultFileTimeout
	}
	if o.MaxMessageChars == 0 {
		o.MaxMessageChars = DefaultMaxMessageChars
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if err := CheckHomeserverURL(o.HomeserverURL); err != nil {
		errs = append(errs, fmt.Errorf("HomeserverURL: %w", err))
	}
	if err := CheckUserID(o.UserID); err != nil {
		errs = append(errs, fmt.Errorf("UserID: %w", err))
	}
	if strings.TrimSpace(o.AccessToken) == "" {
		errs = append(errs, errors.New("AccessToken is required"))
	}
	if o.Submitter == nil {
		errs = append(errs, errors.New("Submitter is required"))
	}
	if o.Sync == nil {
		errs = append(errs, errors.New("Sync is required"))
	}
	if o.StreamUpdateInterval < minStreamInterval {
		errs = append(errs, fmt.Errorf("StreamUpdateInterval %s is under %s", o.StreamUpdateInterval, minStreamInterval))
	}
	if o.LeaseTTL < 3*time.Second {
		errs = append(errs, fmt.Errorf("LeaseTTL %s is under 3s", o.LeaseTTL))
	}
	return errors.Join(errs...)
}

// CheckHomeserverURL checks a homeserver base URL (MATRIX_HOMESERVER_URL).
func CheckHomeserverURL(s string) error {
	if s == "" {
		return errors.New("is required (the homeserver's base URL, such as https://matrix.example.org)")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL such as https://matrix.example.org", s)
	}
	return nil
}

// CheckUserID checks a full Matrix user id (MATRIX_USER_ID).
func CheckUserID(s string) error {
	if s == "" {
		return errors.New("is required (the bot's full user id, such as @switchboard:example.org)")
	}
	if _, _, err := id.UserID(s).ParseAndValidateRelaxed(); err != nil {
		return fmt.Errorf("%q is not a Matrix user id such as @switchboard:example.org: %w", s, err)
	}
	return nil
}

// Adapter connects Switchboard to Matrix.
type Adapter struct {
	opts Options
	log  *slog.Logger
	cli  *mautrix.Client
	bot  id.UserID

	mu      sync.Mutex
	started bool
	stopped bool
	botName string
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	roomMu sync.Mutex
	rooms  map[id.RoomID]*roomInfo
	dms    map[id.UserID]id.RoomID
	// directRooms are the direct chats m.direct lists, with their person.
	directRooms map[id.RoomID]id.UserID
	// directMu serialises changes of m.direct (read, add, write).
	directMu sync.Mutex
	// encryptedSeen are rooms told they cannot be read (the notice's
	// transaction id makes it once per room on the homeserver too).
	encryptedSeen map[id.RoomID]bool
}

var (
	_ bots.Adapter       = (*Adapter)(nil)
	_ bots.Editor        = (*Adapter)(nil)
	_ bots.Streamer      = (*Adapter)(nil)
	_ bots.StreamResumer = (*Adapter)(nil)
	_ bots.StatusSetter  = (*Adapter)(nil)
	_ bots.ThreadStarter = (*Adapter)(nil)
)

// New validates opts and prepares a client; Start checks the account and
// starts syncing.
func New(opts Options) (*Adapter, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("matrix: invalid options: %w", err)
	}
	cli, err := mautrix.NewClient(o.HomeserverURL, id.UserID(o.UserID), o.AccessToken)
	if err != nil {
		return nil, fmt.Errorf("matrix: creating client: %w", err)
	}
	cli.Client = o.HTTPClient
	// Rate limits are the adapter's (see retry): mautrix's own retry reads
	// only Retry-After and has no cap.
	cli.DefaultHTTPRetries = 0
	cli.IgnoreRateLimit = true
	a := &Adapter{
		opts: o, log: o.Logger, cli: cli, bot: id.UserID(o.UserID),
		rooms: map[id.RoomID]*roomInfo{}, dms: map[id.UserID]id.RoomID{}, directRooms: map[id.RoomID]id.UserID{}, encryptedSeen: map[id.RoomID]bool{},
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a, nil
}

// Name implements bots.Adapter.
func (a *Adapter) Name() string { return Platform }

// Start checks that the token is the bot's (whoami) and starts the sync
// loop, which syncs while this instance holds the lease.
func (a *Adapter) Start(ctx context.Context) error {
	a.mu.Lock()
	if a.started || a.stopped {
		a.mu.Unlock()
		return errors.New("matrix: adapter already started")
	}
	a.started = true
	a.mu.Unlock()

	who, err := a.cli.Whoami(ctx)
	switch {
	case errors.Is(err, mautrix.MUnknownToken) || errors.Is(err, mautrix.MMissingToken):
		return fmt.Errorf("matrix: MATRIX_ACCESS_TOKEN is not a token %s knows: %w", a.opts.HomeserverURL, err)
	case err != nil:
		return fmt.Errorf("matrix: asking %s who the token belongs to: %w", a.opts.HomeserverURL, err)
	case who.UserID != a.bot:
		return fmt.Errorf("matrix: MATRIX_USER_ID is %s but MATRIX_ACCESS_TOKEN belongs to %s", a.bot, who.UserID)
	}
	if dn, err := a.cli.GetOwnDisplayName(ctx); err == nil && dn.DisplayName != "" {
		a.mu.Lock()
		a.botName = dn.DisplayName
		a.mu.Unlock()
	}
	direct, err := a.loadDirect(ctx)
	if err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	a.setDirect(direct)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.syncLoop(a.ctx)
	}()
	a.log.InfoContext(ctx, "matrix connected", "user_id", a.bot, "device_id", who.DeviceID)
	return nil
}

// Stop ends the sync loop, waits for what runs, and gives the lease up.
func (a *Adapter) Stop() {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return
	}
	a.stopped = true
	started := a.started
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
	if started {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.opts.Sync.Resign(ctx); err != nil {
			a.log.Warn("giving up the matrix sync lease", "err", err)
		}
	}
}

// enter counts a piece of background work; false once Stop has begun,
// and the work must then not run.
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

// goTracked runs f in a goroutine that Stop waits for; false once Stop
// has begun.
func (a *Adapter) goTracked(f func(ctx context.Context)) bool {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return false
	}
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		f(a.ctx)
	}()
	return true
}

func (a *Adapter) name() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botName
}

// ThreadOf implements bots.ThreadStarter: a message starts a thread that
// replies (m.thread relations) join.
func (a *Adapter) ThreadOf(ref bots.MessageRef) (channel, thread string) {
	return ref.Channel, ref.ID
}

// Profile reads a person's display name for core's directory
// (a core.ProfileFunc). Matrix shares no time zone.
func (a *Adapter) Profile(ctx context.Context, _ string, userID string) (core.Profile, error) {
	p, err := a.cli.GetProfile(ctx, id.UserID(userID))
	if err != nil {
		return core.Profile{}, fmt.Errorf("matrix: reading the profile of %s: %w", userID, err)
	}
	name := p.DisplayName
	if name == "" {
		name = id.UserID(userID).Localpart()
	}
	return core.Profile{DisplayName: name}, nil
}
