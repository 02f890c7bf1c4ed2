// Package access decides who may talk to agents: the DM policy (pairing by
// default, allowlist, open, disabled) and the channel policy of each
// workspace and channel, as the access: block of switchboard.yaml sets them,
// and the pairings an operator or admin approved (kept in the store).
//
// The Gate runs in front of core's Submit: a refused message is decided on
// before anything is written, so it leaves no entry, no conversation and no
// work item. The person gets one polite reply at most once a UTC day
// (a refusal_notices row), which the platform adapter sends itself,
// privately where the platform allows.
//
//	stranger's DM ──► Gate.Admit ──► pairing? ──► code handed out (store)
//	                      │                          │
//	                      │ approved / allowlisted   ▼
//	                      ▼                     Notice ──► adapter posts it
//	                 core.Submit                 (once a day)
//
// Messages from the API, the terminal and the scheduler are not the Gate's:
// the API has its own authentication, the others are the operator's.
package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Admins says who may administer access (approve pairing codes) on a
// platform by the operator's say-so: ConfigAdmins reads the access.admins
// list. The owners and admins of the workspace a team is bound to count
// besides, for the codes handed out in that workspace's teams.
type Admins interface {
	IsAdmin(ctx context.Context, id Identity) (bool, error)
}

// Identity is a person as a platform knows them.
type Identity struct {
	Platform  string
	Workspace string // Slack team, Discord guild; "" in a Discord DM
	UserID    string
}

// ConfigAdmins is Admins from access.admins: the listed platform user ids
// are admins everywhere.
type ConfigAdmins struct{ Access *config.Access }

// IsAdmin implements Admins.
func (c ConfigAdmins) IsAdmin(_ context.Context, id Identity) (bool, error) {
	return c.Access != nil && c.Access.IsAdmin(id.UserID), nil
}

// Options configures a Gate.
type Options struct {
	// Store keeps pairings and refusal notices. Required.
	Store store.Store
	// Access is the access: block; nil is the defaults (pairing for DMs,
	// mentions answered in every channel).
	Access *config.Access
	// Admins is the operator's override, admins everywhere. Default:
	// ConfigAdmins over Access.
	Admins Admins
	Now    func() time.Time
	Logger *slog.Logger
}

// Gate is core.Gate over the policy and the store.
type Gate struct {
	opts Options
	// access is Options.Access, replaced by a reload (SetAccess).
	access atomic.Pointer[config.Access]
}

var (
	_ core.Gate    = (*Gate)(nil)
	_ core.Refuser = (*Gate)(nil)
)

// Gated lists the platforms whose messages the Gate judges.
var Gated = []string{"slack", "discord", "telegram", "matrix"}

// New returns a Gate.
func New(o Options) (*Gate, error) {
	if o.Store == nil {
		return nil, errors.New("access: Options.Store is required")
	}
	if o.Access == nil {
		o.Access = &config.Access{}
	}
	g := &Gate{}
	g.access.Store(o.Access)
	if o.Admins == nil {
		o.Admins = currentAdmins{g}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	g.opts = o
	return g, nil
}

// SetAccess replaces the access: block, as a reload of switchboard.yaml
// does: the next message is judged by it.
func (g *Gate) SetAccess(a *config.Access) {
	if a == nil {
		a = &config.Access{}
	}
	g.access.Store(a)
}

// currentAdmins is ConfigAdmins over the gate's access: block as last
// loaded.
type currentAdmins struct{ g *Gate }

func (c currentAdmins) IsAdmin(ctx context.Context, id Identity) (bool, error) {
	return ConfigAdmins{Access: c.g.access.Load()}.IsAdmin(ctx, id)
}

// The polite replies.
const (
	NoticeAllowlist = "Sorry, I can only talk with people on this workspace's list. Ask an admin to add you."
	NoticeDisabled  = "Sorry, direct messages to agents are turned off here."
	NoticeChannel   = "Sorry, agents don't answer in this channel."
	NoticeForeign   = "Sorry, agents here answer only members of this workspace."
	NoticePinned    = "Sorry, that agent doesn't work in this workspace."
)

// PairingNotice is the reply that hands a stranger their code.
func PairingNotice(code string, expires time.Time) string {
	return fmt.Sprintf("Hi! I don't know you yet, so your message didn't reach an agent. "+
		"Your pairing code is %s. Ask the operator to run `switchboard pairing approve %s`, "+
		"or an admin to send me `!approve %s`; once approved, just write again. "+
		"The code is valid until %s.", code, code, code, expires.UTC().Format("2006-01-02 15:04 UTC"))
}

// Admit implements core.Gate.
func (g *Gate) Admit(ctx context.Context, in *core.Inbound) (*core.Admission, error) {
	if !slices.Contains(Gated, in.Platform) {
		return &core.Admission{}, nil
	}
	rule := g.access.Load().Resolve(in.Workspace, in.Channel)
	if !in.IsDM {
		member, err := g.sameWorkspace(ctx, in)
		if err != nil {
			return nil, err
		}
		if !member {
			if !in.Mentioned {
				return &core.Admission{Refused: true}, nil // not addressed: nothing to say
			}
			return g.refuse(ctx, in, NoticeForeign)
		}
		if len(rule.AnswerIn) > 0 && !slices.Contains(rule.AnswerIn, in.Channel) {
			if !in.Mentioned {
				return &core.Admission{Refused: true}, nil // not addressed: nothing to say
			}
			return g.refuse(ctx, in, NoticeChannel)
		}
		return &core.Admission{Addressed: !rule.RequireMention}, nil
	}
	id := Identity{Platform: in.Platform, Workspace: in.Workspace, UserID: in.UserID}
	if rule.DMPolicy == config.DMOpen || slices.Contains(rule.Allowlist, in.UserID) {
		return &core.Admission{}, nil
	}
	admin, err := g.isAdmin(ctx, id)
	if err != nil {
		return nil, err
	}
	if admin {
		return &core.Admission{}, nil
	}
	switch rule.DMPolicy {
	case config.DMDisabled:
		return g.refuse(ctx, in, NoticeDisabled)
	case config.DMAllowlist:
		return g.refuse(ctx, in, NoticeAllowlist)
	}
	// Pairing. A code lives to the end of the next UTC day, so a new one is
	// only ever handed out on a day the person has not been told anything
	// yet, and the once-a-day rule never swallows it.
	now := g.opts.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	res, err := g.opts.Store.PairingRequest(ctx, &store.PairingRequestParams{
		Platform: in.Platform, UserID: in.UserID, Workspace: in.Workspace, UserName: in.UserName,
		Now: now, ExpiresAt: day.AddDate(0, 0, 2),
	})
	if err != nil {
		return nil, err
	}
	if res.Pairing.Approved() {
		return &core.Admission{}, nil
	}
	if res.Created {
		g.opts.Logger.InfoContext(ctx, "pairing code handed out", "platform", in.Platform, "user_id", in.UserID, "user_name", in.UserName)
	}
	return g.refuse(ctx, in, PairingNotice(res.Pairing.Code, res.Pairing.ExpiresAt))
}

// sameWorkspace reports whether a channel message's sender belongs where
// the channel does: a sender of another platform team (a Slack Connect
// channel shared between teams) counts only when their team is bound to
// the same workspace as the channel's.
func (g *Gate) sameWorkspace(ctx context.Context, in *core.Inbound) (bool, error) {
	if in.UserWorkspace == "" || in.UserWorkspace == in.Workspace {
		return true, nil
	}
	theirs, err := workspace.Bound(ctx, g.opts.Store, in.Platform, in.UserWorkspace)
	if err != nil || theirs == nil {
		return false, err
	}
	ours, err := workspace.Bound(ctx, g.opts.Store, in.Platform, in.Workspace)
	return err == nil && ours != nil && *ours == *theirs, err
}

// isAdmin reports whether a person is an admin everywhere (Options.Admins)
// or an owner or admin of the workspace their team is bound to.
func (g *Gate) isAdmin(ctx context.Context, id Identity) (bool, error) {
	ok, err := g.opts.Admins.IsAdmin(ctx, id)
	if err != nil || ok {
		return ok, wrapAdmin(err)
	}
	ws, err := g.adminOf(ctx, id)
	return ws != nil, err
}

// adminOf is the workspace a person is an owner or admin of by their role
// there: the one their team is bound to. nil when they are none's.
func (g *Gate) adminOf(ctx context.Context, id Identity) (*uuid.UUID, error) {
	ws, err := workspace.Bound(ctx, g.opts.Store, id.Platform, id.Workspace)
	if err != nil || ws == nil {
		return nil, wrapAdmin(err)
	}
	ok, err := workspace.MayDecide(ctx, g.opts.Store, core.IdentityOf(id.Platform, id.Workspace, id.UserID), *ws)
	if err != nil || !ok {
		return nil, wrapAdmin(err)
	}
	return ws, nil
}

func wrapAdmin(err error) error {
	if err != nil {
		return fmt.Errorf("checking admin: %w", err)
	}
	return nil
}

// Refuse implements core.Refuser: the refusals core makes after the Gate
// admitted a message get their polite reply, at most once a day.
func (g *Gate) Refuse(ctx context.Context, in *core.Inbound, why core.Refusal) (*core.Admission, error) {
	notice := NoticeChannel
	if why == core.RefusalPinnedAway {
		notice = NoticePinned
	}
	return g.refuse(ctx, in, notice)
}

// refuse refuses the message, with notice when the person was not told
// anything yet today.
func (g *Gate) refuse(ctx context.Context, in *core.Inbound, notice string) (*core.Admission, error) {
	fresh, err := g.opts.Store.RefusalNoticeRecord(ctx, &store.RefusalNoticeParams{
		Platform: in.Platform, UserID: in.UserID, Now: g.opts.Now(),
	})
	if err != nil {
		return nil, err
	}
	g.opts.Logger.DebugContext(ctx, "message refused", "platform", in.Platform, "user_id", in.UserID, "channel", in.Channel, "told", fresh)
	if !fresh {
		notice = ""
	}
	return &core.Admission{Refused: true, Notice: notice}, nil
}

// Approve approves a pending pairing code; by says who did, for the record.
// The error wraps store.ErrNotFound when no pending code matches.
func (g *Gate) Approve(ctx context.Context, code, by string) (*store.Pairing, error) {
	p, err := g.opts.Store.PairingApprove(ctx, &store.PairingApproveParams{Code: code, By: by, Now: g.opts.Now()})
	if err != nil {
		return nil, err
	}
	g.opts.Logger.InfoContext(ctx, "pairing approved", "platform", p.Platform, "user_id", p.UserID, "by", by)
	return p, nil
}

// Pending lists the codes waiting for approval, newest first.
func (g *Gate) Pending(ctx context.Context) ([]*store.Pairing, error) {
	return g.opts.Store.PairingList(ctx, &store.PairingListParams{Status: store.PairingPending, Now: g.opts.Now()})
}

// Commands answers !approve CODE (admins only) and hands every other
// command to next.
func (g *Gate) Commands(next core.CommandFunc) core.CommandFunc {
	return func(ctx context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
		f := strings.Fields(cmd.Text)
		if len(f) == 0 || f[0] != "approve" {
			return next(ctx, in, cmd)
		}
		if len(f) != 2 {
			return "", fmt.Errorf("%w: usage: !approve CODE", core.ErrInvalid)
		}
		id := Identity{Platform: in.Platform, Workspace: in.Workspace, UserID: in.UserID}
		admin, err := g.opts.Admins.IsAdmin(ctx, id)
		if err != nil {
			return "", wrapAdmin(err)
		}
		if !admin {
			// A workspace's owners and admins let in the strangers of
			// their own workspace's teams.
			ws, err := g.adminOf(ctx, id)
			if err != nil {
				return "", err
			}
			if ws == nil {
				return "Only an admin can approve pairing codes.", nil
			}
			if reply, err := g.mayApproveIn(ctx, f[1], *ws); err != nil || reply != "" {
				return reply, err
			}
		}
		p, err := g.Approve(ctx, f[1], in.UserID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Sprintf("No pending pairing has the code %s (unknown, expired or approved already).", store.NormalizePairingCode(f[1])), nil
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Approved %s: they can talk to agents now.", Describe(p)), nil
	}
}

// mayApproveIn says why a workspace's admin may not approve code (a reply
// for them), or "" when the code was handed out in a team bound to ws.
func (g *Gate) mayApproveIn(ctx context.Context, code string, ws uuid.UUID) (string, error) {
	pending, err := g.Pending(ctx)
	if err != nil {
		return "", err
	}
	code = store.NormalizePairingCode(code)
	for _, p := range pending {
		if p.Code != code {
			continue
		}
		theirs, err := workspace.Bound(ctx, g.opts.Store, p.Platform, p.Workspace)
		if err != nil {
			return "", err
		}
		if theirs == nil || *theirs != ws {
			return fmt.Sprintf("The code %s was handed out outside this workspace; only the operator can approve it.", code), nil
		}
		return "", nil
	}
	return "", nil // Approve says the code is unknown
}

// Describe names a pairing's person for a reply or a listing.
func Describe(p *store.Pairing) string {
	who := p.Platform + " user " + p.UserID
	if p.UserName != "" {
		who = p.UserName + " (" + who + ")"
	}
	return who
}

// Guard answers a platform's command form (Discord's /remind), which does
// not pass through Submit, only for people the policy admits; the others
// get the policy's reply, which the form shows to them alone.
func (g *Gate) Guard(next core.CommandFunc) core.CommandFunc {
	return func(ctx context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
		adm, err := g.Admit(ctx, in)
		if err != nil {
			return "", err
		}
		if adm.Refused {
			if adm.Notice == "" {
				return "Sorry, you can't use that here.", nil
			}
			return adm.Notice, nil
		}
		return next(ctx, in, cmd)
	}
}
