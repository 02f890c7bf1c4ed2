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
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/store"
)

// Admins says who may administer access (approve pairing codes) on a
// platform. ConfigAdmins reads the access.admins list; workspace roles can
// take its place.
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
type ConfigAdmins struct{ Access *agent.Access }

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
	Access *agent.Access
	// Admins default: ConfigAdmins over Access.
	Admins Admins
	Now    func() time.Time
	Logger *slog.Logger
}

// Gate is core.Gate over the policy and the store.
type Gate struct {
	opts Options
}

var _ core.Gate = (*Gate)(nil)

// Gated lists the platforms whose messages the Gate judges.
var Gated = []string{"slack", "discord"}

// New returns a Gate.
func New(o Options) (*Gate, error) {
	if o.Store == nil {
		return nil, errors.New("access: Options.Store is required")
	}
	if o.Access == nil {
		o.Access = &agent.Access{}
	}
	if o.Admins == nil {
		o.Admins = ConfigAdmins{Access: o.Access}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gate{opts: o}, nil
}

// The polite replies.
const (
	NoticeAllowlist = "Sorry, I can only talk with people on this workspace's list. Ask an admin to add you."
	NoticeDisabled  = "Sorry, direct messages to agents are turned off here."
	NoticeChannel   = "Sorry, agents don't answer in this channel."
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
	rule := g.opts.Access.Resolve(in.Workspace, in.Channel)
	if !in.IsDM {
		if len(rule.AnswerIn) > 0 && !slices.Contains(rule.AnswerIn, in.Channel) {
			if !in.Mentioned {
				return &core.Admission{Refused: true}, nil // not addressed: nothing to say
			}
			return g.refuse(ctx, in, NoticeChannel)
		}
		return &core.Admission{Addressed: !rule.RequireMention}, nil
	}
	id := Identity{Platform: in.Platform, Workspace: in.Workspace, UserID: in.UserID}
	if rule.DMPolicy == agent.DMOpen || slices.Contains(rule.Allowlist, in.UserID) {
		return &core.Admission{}, nil
	}
	admin, err := g.opts.Admins.IsAdmin(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("checking admin: %w", err)
	}
	if admin {
		return &core.Admission{}, nil
	}
	switch rule.DMPolicy {
	case agent.DMDisabled:
		return g.refuse(ctx, in, NoticeDisabled)
	case agent.DMAllowlist:
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
		admin, err := g.opts.Admins.IsAdmin(ctx, Identity{Platform: in.Platform, Workspace: in.Workspace, UserID: in.UserID})
		if err != nil {
			return "", fmt.Errorf("checking admin: %w", err)
		}
		if !admin {
			return "Only an admin can approve pairing codes.", nil
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
