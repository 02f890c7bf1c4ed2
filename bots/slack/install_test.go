package slack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// The install flow's states are package oauthstate's (tested there); this
// checks the adapter refuses what it must, with the slack errors.
func TestInstallState(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	spent := map[string]bool{}
	a := &Adapter{opts: Options{Now: func() time.Time { return now }, OAuth: &OAuthOptions{
		StateKey: []byte("0123456789abcdef0123"),
		ClaimStateFunc: func(_ context.Context, nonce string, _ time.Time) (bool, error) {
			fresh := !spent[nonce]
			spent[nonce] = true
			return fresh, nil
		},
	}}}
	good, err := a.opts.OAuth.signer(a.opts.Now).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := a.opts.OAuth.signer(func() time.Time { return now.Add(-11 * time.Minute) }).New(nil)
	other := *a.opts.OAuth
	other.StateKey = []byte("another key of 20 by")
	otherKey, _ := other.signer(a.opts.Now).New(nil)
	flip := "x"
	if good[5] == 'x' {
		flip = "y"
	}
	tests := []struct {
		name, state string
		want        error
	}{
		{"fresh", good, nil},
		{"replayed", good, ErrStateUsed},
		{"expired", expired, ErrStateExpired},
		{"signed with another key", otherKey, ErrStateInvalid},
		{"tampered", good[:5] + flip + good[6:], ErrStateInvalid},
		{"empty", "", ErrStateInvalid},
	}
	for _, tt := range tests {
		if err := a.checkState(context.Background(), tt.state); !errors.Is(err, tt.want) {
			t.Errorf("%s state: checkState = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestInstallationOf reads oauth.v2.access's answers as Slack documents
// them: a plain bot token for a team, an expiring one with its refresh
// token (token rotation), an organisation-wide install keyed by its
// enterprise; and refuses answers that break those shapes.
func TestInstallationOf(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	base := func() *slack.OAuthV2Response {
		return &slack.OAuthV2Response{TokenType: "bot", AccessToken: "xoxb-1", BotUserID: "U1", Team: slack.OAuthV2ResponseTeam{ID: "T1", Name: "One"}}
	}
	plain, err := installationOf(base(), now)
	if err != nil || plain.TeamID != "T1" || plain.RefreshToken != "" || !plain.TokenExpiresAt.IsZero() {
		t.Fatalf("a plain install: %+v, %v", plain, err)
	}
	r := base()
	r.AccessToken, r.RefreshToken, r.ExpiresIn = "xoxe.xoxb-1-abc", "xoxe-1-def", 43200
	rot, err := installationOf(r, now)
	if err != nil || rot.RefreshToken != "xoxe-1-def" || !rot.TokenExpiresAt.Equal(now.Add(12*time.Hour)) {
		t.Fatalf("a rotating install: %+v, %v; want the refresh token and the expiry 12h out", rot, err)
	}
	o := base()
	o.Team, o.IsEnterpriseInstall = slack.OAuthV2ResponseTeam{}, true
	o.Enterprise = slack.OAuthV2ResponseEnterprise{ID: "E1", Name: "Grid"}
	org, err := installationOf(o, now)
	if err != nil || org.TeamID != "E1" || !org.EnterpriseInstall || org.EnterpriseID != "E1" || org.TeamName != "Grid" {
		t.Fatalf("an org-wide install: %+v, %v; want keyed by E1", org, err)
	}
	for name, mutate := range map[string]func(*slack.OAuthV2Response){
		"a user token":                     func(r *slack.OAuthV2Response) { r.TokenType = "user" },
		"rotation without a refresh token": func(r *slack.OAuthV2Response) { r.AccessToken, r.ExpiresIn = "xoxe.xoxb-1", 43200 },
		"rotation with an xoxb- token":     func(r *slack.OAuthV2Response) { r.RefreshToken, r.ExpiresIn = "xoxe-1-x", 43200 },
		"no team":                          func(r *slack.OAuthV2Response) { r.Team = slack.OAuthV2ResponseTeam{} },
		"org-wide without an enterprise":   func(r *slack.OAuthV2Response) { r.IsEnterpriseInstall = true },
	} {
		r := base()
		mutate(r)
		if in, err := installationOf(r, now); err == nil {
			t.Errorf("%s: read as %+v, want refused", name, in)
		}
	}
}
