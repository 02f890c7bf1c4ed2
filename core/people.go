package core

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// Profile is what a platform says about one of its users.
type Profile struct {
	DisplayName string
	TimeZone    string // an IANA name; "" when the platform does not say
}

// ProfileFunc reads a user's profile from one platform; workspace is where
// they were seen (the Slack team, the Discord guild or "" in a DM).
type ProfileFunc func(ctx context.Context, workspace, userID string) (Profile, error)

// People finds the person behind a platform user. Others (workspaces,
// access policy) take this interface, not *Directory.
type People interface {
	// Resolve finds or creates the person and refreshes their profile from
	// the platform when it is older than the directory's TTL.
	Resolve(ctx context.Context, platform, workspace, userID string) (*store.Person, error)
}

// PersonCreatedFunc runs inside the transaction that creates a person, so
// what it writes (a personal workspace) commits with the person or not at
// all.
type PersonCreatedFunc func(ctx context.Context, q store.Queries, p *store.Person) error

// DirectoryOptions configures a Directory.
type DirectoryOptions struct {
	Store store.Store
	// Profiles reads profiles per platform ("slack", "discord"). People are
	// kept only for the platforms listed here.
	Profiles map[string]ProfileFunc
	// TTL is how long a profile read stays fresh (default 24h): a person
	// seen after it is read again from the platform.
	TTL time.Duration
	// PersonCreated, when set, runs in the transaction creating a person.
	PersonCreated PersonCreatedFunc
	Logger        *slog.Logger
	Now           func() time.Time
}

// Directory keeps the people behind platform users: created on first
// sight, profiles cached for TTL, identities linked by one-time codes.
type Directory struct {
	o DirectoryOptions

	// known holds identities found or made in the store by this process.
	// People and identities are never deleted (a merge moves identities,
	// it does not remove them), so one found stays found: EnsureKnown skips
	// the store for it.
	knownMu sync.Mutex
	known   map[store.Identity]struct{}
}

// maxKnown bounds Directory.known; when full it starts again, empty.
const maxKnown = 10000

var _ People = (*Directory)(nil)

// LinkCodeTTL is how long a !link code may be typed on the other platform.
const LinkCodeTTL = 10 * time.Minute

// NewDirectory returns a Directory.
func NewDirectory(o DirectoryOptions) (*Directory, error) {
	if o.Store == nil {
		return nil, errors.New("core: DirectoryOptions.Store is required")
	}
	if o.TTL < 0 {
		return nil, fmt.Errorf("core: DirectoryOptions.TTL %s must not be negative", o.TTL)
	}
	if o.TTL == 0 {
		o.TTL = 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Directory{o: o}, nil
}

// SetProfile sets the ProfileFunc of a platform; call it before the
// directory is used (the app adds each platform once its adapter exists).
func (d *Directory) SetProfile(platform string, fn ProfileFunc) {
	if d.o.Profiles == nil {
		d.o.Profiles = map[string]ProfileFunc{}
	}
	d.o.Profiles[platform] = fn
}

// Keeps reports whether people are kept for a platform.
func (d *Directory) Keeps(platform string) bool {
	_, ok := d.o.Profiles[platform]
	return ok
}

// IdentityOf names a platform user. Discord, Telegram and Matrix user ids
// are global, so such a user is one identity in every guild, group or room
// and in DMs; a Slack user belongs to their team.
// globalUserIDs are the platforms whose user ids are the same in every
// workspace.
var globalUserIDs = map[string]bool{"discord": true, "telegram": true, "matrix": true}

func IdentityOf(platform, workspace, userID string) store.Identity {
	if globalUserIDs[platform] {
		workspace = ""
	}
	return store.Identity{Platform: platform, Workspace: workspace, UserID: userID}
}

// Ensure finds or creates the person behind a platform user without asking
// the platform: the cheap step Submit takes. name is the provisional display
// name when the person is new.
func (d *Directory) Ensure(ctx context.Context, platform, workspace, userID, name string) (*store.Person, error) {
	id := IdentityOf(platform, workspace, userID)
	p, err := d.o.Store.PersonFind(ctx, &store.PersonFindParams{Identity: id})
	if !errors.Is(err, store.ErrNotFound) {
		return p, err
	}
	return d.create(ctx, id, name)
}

// EnsureKnown makes sure a person exists behind a platform user, as Ensure
// does, for a caller that needs nothing of them (Submit): a user this
// process found or made before costs no read, so a burst of one person's
// messages puts nothing on the acknowledgement's path but its commit.
func (d *Directory) EnsureKnown(ctx context.Context, platform, workspace, userID, name string) error {
	id := IdentityOf(platform, workspace, userID)
	d.knownMu.Lock()
	_, ok := d.known[id]
	d.knownMu.Unlock()
	if ok {
		return nil
	}
	if _, err := d.Ensure(ctx, platform, workspace, userID, name); err != nil {
		return err
	}
	d.knownMu.Lock()
	defer d.knownMu.Unlock()
	if d.known == nil || len(d.known) >= maxKnown {
		d.known = map[store.Identity]struct{}{}
	}
	d.known[id] = struct{}{}
	return nil
}

// create is the one place a person is made.
func (d *Directory) create(ctx context.Context, id store.Identity, name string) (*store.Person, error) {
	var p *store.Person
	err := d.o.Store.InTx(ctx, func(q store.Queries) error {
		var err error
		p, err = q.PersonCreate(ctx, &store.PersonCreateParams{Identity: id, DisplayName: name, Now: d.o.Now()})
		if err != nil || d.o.PersonCreated == nil {
			return err
		}
		return d.o.PersonCreated(ctx, q, p)
	})
	if errors.Is(err, store.ErrConflict) {
		// Created by a concurrent first message.
		return d.o.Store.PersonFind(ctx, &store.PersonFindParams{Identity: id})
	}
	if err != nil {
		return nil, fmt.Errorf("creating person for %s user %s: %w", id.Platform, id.UserID, err)
	}
	d.o.Logger.InfoContext(ctx, "person created", "person_id", p.ID, "platform", id.Platform, "user_id", id.UserID)
	return p, nil
}

// Resolve finds or creates the person and refreshes a stale profile. A
// refresh that fails keeps the values stored and is logged: the next sight
// tries again.
func (d *Directory) Resolve(ctx context.Context, platform, workspace, userID string) (*store.Person, error) {
	p, err := d.Ensure(ctx, platform, workspace, userID, "")
	if err != nil {
		return nil, err
	}
	read, ok := d.o.Profiles[platform]
	if !ok {
		return p, nil
	}
	id := IdentityOf(platform, workspace, userID)
	now := d.o.Now()
	for _, pi := range p.Identities {
		if pi.Identity == id && pi.RefreshedAt != nil && now.Sub(*pi.RefreshedAt) < d.o.TTL {
			return p, nil
		}
	}
	prof, err := read(ctx, workspace, userID)
	if err != nil {
		d.o.Logger.WarnContext(ctx, "reading a profile failed; keeping the stored one", "platform", platform,
			"user_id", userID, "person_id", p.ID, "error", redact.String(err.Error()))
		return p, nil
	}
	np, err := d.o.Store.PersonSetProfile(ctx, &store.PersonProfileParams{
		ID: p.ID, Identity: id, DisplayName: prof.DisplayName, TimeZone: prof.TimeZone, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("recording the profile of person %s: %w", p.ID, err)
	}
	return np, nil
}

// LinkStart issues a one-time code for the person behind a user; typed as
// "!link CODE" on another platform within LinkCodeTTL it links that
// identity to this person. Only its hash is stored.
func (d *Directory) LinkStart(ctx context.Context, platform, workspace, userID string) (string, error) {
	p, err := d.Ensure(ctx, platform, workspace, userID, "")
	if err != nil {
		return "", err
	}
	code, err := newLinkCode()
	if err != nil {
		return "", err
	}
	now := d.o.Now()
	if _, err := d.o.Store.PersonLinkCodeCreate(ctx, &store.PersonLinkCodeCreateParams{
		PersonID: p.ID, CodeHash: hashLinkCode(code), Platform: platform, ExpiresAt: now.Add(LinkCodeTTL), Now: now,
	}); err != nil {
		return "", err
	}
	return code, nil
}

// ErrLinkCode is a link code that is unknown, used, expired, or typed on
// the platform that issued it.
var ErrLinkCode = errors.New("that code is unknown, used or expired")

// LinkFinish spends a code typed by a user and merges the two people: the
// older record wins (its id, and its name and time zone where it has them),
// the newer one's identities move to it and it is marked merged.
func (d *Directory) LinkFinish(ctx context.Context, platform, workspace, userID, code string) (*store.Person, error) {
	me, err := d.Ensure(ctx, platform, workspace, userID, "")
	if err != nil {
		return nil, err
	}
	var kept *store.Person
	err = d.o.Store.InTx(ctx, func(q store.Queries) error {
		now := d.o.Now()
		c, err := q.PersonLinkCodeUse(ctx, &store.PersonLinkCodeUseParams{CodeHash: hashLinkCode(code), Now: now})
		if errors.Is(err, store.ErrNotFound) {
			return ErrLinkCode
		}
		if err != nil {
			return err
		}
		if c.Platform == platform {
			return fmt.Errorf("%w: type it in a DM on the other platform", ErrLinkCode)
		}
		issuer, err := q.PersonGet(ctx, c.PersonID)
		if err != nil {
			return err
		}
		if issuer.MergedInto != nil {
			if issuer, err = q.PersonGet(ctx, *issuer.MergedInto); err != nil {
				return err
			}
		}
		if issuer.ID == me.ID {
			kept = me
			return nil
		}
		keep, drop := issuer, me
		if drop.CreatedAt.Before(keep.CreatedAt) || (drop.CreatedAt.Equal(keep.CreatedAt) && drop.ID.String() < keep.ID.String()) {
			keep, drop = drop, keep
		}
		kept, err = q.PersonMerge(ctx, &store.PersonMergeParams{Keep: keep.ID, Drop: drop.ID, Now: now})
		return err
	})
	if err != nil {
		return nil, err
	}
	return kept, nil
}

// HideLinkCode returns a message as the log keeps it: "!link CODE" loses
// its code, so the conversation log, a conversation's title and the
// service log never hold one that may still be live. Any other text comes
// back as it is.
func HideLinkCode(text string) string {
	cmd, ok := commandText(text)
	if f := strings.Fields(cmd); ok && len(f) > 1 && strings.EqualFold(f[0], "link") {
		return CommandPrefix + f[0] + " " + hiddenLinkCode
	}
	return text
}

// hiddenLinkCode stands where a typed link code was.
const hiddenLinkCode = "••••••••"

// Link codes: eight characters of an alphabet without look-alikes.
const linkAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

func newLinkCode() (string, error) {
	var b strings.Builder
	for range 8 {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(linkAlphabet))))
		if err != nil {
			return "", fmt.Errorf("making a link code: %w", err)
		}
		b.WriteByte(linkAlphabet[n.Int64()])
	}
	return b.String(), nil
}

func hashLinkCode(code string) string {
	sum := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return hex.EncodeToString(sum[:])
}

// speakerNames maps each person speaking in entries to their display name,
// refreshing the latest speaker's profile (a platform call, on the turn,
// never on the ack). Lookups that fail leave the name out.
func (d *Directory) speakerNames(ctx context.Context, entries []*store.Entry) map[store.Identity]string {
	names := map[store.Identity]string{}
	var last *store.Identity
	// Where the latest speaker was seen: a Discord identity has no guild,
	// but their nickname is read from the guild they wrote in.
	var lastWorkspace string
	for _, e := range entries {
		if e.Kind != store.EntryUser {
			continue
		}
		c, err := Decode[UserContent](e)
		if err != nil || !d.Keeps(c.Platform) || c.UserID == "" {
			continue
		}
		id := IdentityOf(c.Platform, c.Workspace, c.UserID)
		last, lastWorkspace = &id, c.Workspace
		names[id] = ""
	}
	for id := range names {
		var p *store.Person
		var err error
		if last != nil && id == *last {
			p, err = d.Resolve(ctx, id.Platform, lastWorkspace, id.UserID)
		} else {
			p, err = d.o.Store.PersonFind(ctx, &store.PersonFindParams{Identity: id})
		}
		if err != nil {
			d.o.Logger.WarnContext(ctx, "finding a speaker's name", "platform", id.Platform, "user_id", id.UserID, "error", err)
			continue
		}
		names[id] = p.DisplayName
	}
	return names
}
