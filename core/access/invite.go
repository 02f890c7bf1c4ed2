package access

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// Invite is an invitation for the bot to join a place, on a platform where
// anyone may invite it anywhere (Matrix: any account on any federated
// server), so that joining cannot be left to the platform.
type Invite struct {
	Platform  string
	Workspace string
	// Channel is the place the bot is invited to (a Matrix room id).
	Channel string
	// Inviter is the platform user id of who invited the bot.
	Inviter string
	// Direct: the invite is to a direct chat with the inviter.
	Direct bool
}

// MayJoin reports whether the bot accepts an invite under the access
// policy. A direct chat is joined unless direct messages are disabled for
// the inviter, so that the pairing flow (or a polite refusal) can answer
// there. A room is joined only for someone the policy would admit in a
// direct message without a code: an admin, someone on the allowlist, any
// person under dm_policy open, or someone whose pairing was approved; and
// only where the rule's answer_in (when set) lists the room. Otherwise a
// stranger could invite the bot into a room of theirs and talk to agents
// without ever pairing.
func (g *Gate) MayJoin(ctx context.Context, inv *Invite) (bool, error) {
	rule := g.access.Load().Resolve(inv.Workspace, inv.Channel)
	if !inv.Direct && len(rule.AnswerIn) > 0 && !slices.Contains(rule.AnswerIn, inv.Channel) {
		return false, nil
	}
	if rule.DMPolicy == config.DMOpen || slices.Contains(rule.Allowlist, inv.Inviter) {
		return true, nil
	}
	admin, err := g.isAdmin(ctx, Identity{Platform: inv.Platform, Workspace: inv.Workspace, UserID: inv.Inviter})
	if err != nil || admin {
		return admin, err
	}
	if inv.Direct {
		return rule.DMPolicy != config.DMDisabled, nil
	}
	if rule.DMPolicy != config.DMPairing {
		return false, nil
	}
	p, err := g.opts.Store.PairingFind(ctx, &store.PairingFindParams{Platform: inv.Platform, UserID: inv.Inviter})
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("finding the pairing of %s: %w", inv.Inviter, err)
	}
	return p.Approved(), nil
}
