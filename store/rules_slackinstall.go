package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// sealedPrefix is how a value sealed by package secret starts. The store
// cannot open it (it imports nothing of ours) but refuses anything else, so a
// clear-text token never reaches a table.
const sealedPrefix = "v1:"

func checkSealed(field, v string) error {
	if parts := strings.SplitN(v, ":", 3); !strings.HasPrefix(v, sealedPrefix) || len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return invalidf("%s is not a sealed secret (seal it with package secret; clear text is never stored)", field)
	}
	return nil
}

func (q checked) SlackInstallationSave(ctx context.Context, p *SlackInstallationSaveParams) (*SlackInstallation, error) {
	if p == nil || p.TeamID == "" {
		return nil, fmt.Errorf("saving a slack installation: %w", invalidf("empty TeamID"))
	}
	if p.BotUserID == "" {
		return nil, fmt.Errorf("saving the slack installation of %s: %w", p.TeamID, invalidf("empty BotUserID"))
	}
	if err := checkSealed("BotToken", p.BotToken); err != nil {
		return nil, fmt.Errorf("saving the slack installation of %s: %w", p.TeamID, err)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.SlackInstallationSave(ctx, &c)
}

func (q checked) SlackInstallationGet(ctx context.Context, teamID string) (*SlackInstallation, error) {
	if teamID == "" {
		return nil, fmt.Errorf("reading a slack installation: %w", invalidf("empty team id"))
	}
	return q.Queries.SlackInstallationGet(ctx, teamID)
}

func (q checked) SlackInstallationList(ctx context.Context, p *SlackInstallationListParams) ([]*SlackInstallation, error) {
	var c SlackInstallationListParams
	if p != nil {
		c = *p
	}
	if c.Limit < 0 {
		return nil, fmt.Errorf("listing slack installations: %w", invalidf("negative Limit"))
	}
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.SlackInstallationList(ctx, &c)
}

func (q checked) SlackInstallationDelete(ctx context.Context, teamID string) error {
	if teamID == "" {
		return fmt.Errorf("removing a slack installation: %w", invalidf("empty team id"))
	}
	return q.Queries.SlackInstallationDelete(ctx, teamID)
}

func (q checked) SlackInstallationReseal(ctx context.Context, p *SlackInstallationResealParams) (*SlackInstallation, error) {
	if p == nil || p.TeamID == "" {
		return nil, fmt.Errorf("resealing a slack token: %w", invalidf("empty TeamID"))
	}
	for field, v := range map[string]string{"Expect": p.Expect, "BotToken": p.BotToken} {
		if err := checkSealed(field, v); err != nil {
			return nil, fmt.Errorf("resealing the slack token of %s: %w", p.TeamID, err)
		}
	}
	c := *p
	c.Now = q.at(c.Now)
	out, err := q.Queries.SlackInstallationReseal(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		// No row back: the team is gone (ErrNotFound), or its token changed
		// since the caller read it.
		if _, gerr := q.Queries.SlackInstallationGet(ctx, p.TeamID); gerr == nil {
			return nil, fmt.Errorf("resealing the slack token of %s: %w: the token changed since it was read", p.TeamID, ErrConflict)
		}
	}
	return out, err
}
