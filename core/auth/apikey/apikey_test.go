package apikey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func newKeys(t *testing.T, now *time.Time) *apikey.Keys {
	t.Helper()
	k, err := apikey.New(apikey.Options{
		Store:          testenv.SQLite(t),
		Now:            func() time.Time { return *now },
		AgentKnownFunc: func(name string) bool { return name == "atlas" || name == "scout" },
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestCheckRefusesAnythingButTheExactToken(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	k := newKeys(t, &now)
	is, err := k.CreateAgentKey(ctx, "atlas", "")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(is.Token, "_", 3)
	if len(parts) != 3 || parts[0] != "sbk" || len(parts[1]) != 16 || len(parts[2]) != 43 {
		t.Fatalf("agent key %q; want sbk_<16 hex>_<43 base64url>", is.Token)
	}
	if got, err := k.Check(ctx, is.Token); err != nil || got.ID != is.Key.ID {
		t.Fatalf("Check(the key) = %v, %v; want the key", got, err)
	}
	for _, bad := range []string{
		"", "sbk", "sbk_", "sbk__x", parts[0] + "_" + parts[1],
		"sbp_" + parts[1] + "_" + parts[2], // the right secret under another kind's prefix
		parts[0] + "_" + parts[1] + "_" + parts[2][:42] + "x",
		parts[0] + "_" + parts[1] + "_" + parts[2] + "x",
		parts[0] + "_0000000000000000_" + parts[2],
	} {
		if _, err := k.Check(ctx, bad); !errors.Is(err, apikey.ErrInvalid) {
			t.Errorf("Check(%q) = %v; want ErrInvalid", bad, err)
		}
	}
}

func TestExchangeRules(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	k := newKeys(t, &now)
	if _, err := k.CreateAgentKey(ctx, "ghost", ""); !errors.Is(err, apikey.ErrAgent) {
		t.Fatalf("a key for an unconfigured agent: %v; want ErrAgent", err)
	}
	host, err := k.CreateHostToken(ctx, []string{"atlas", "scout"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Exchange(ctx, host.Token, ""); !errors.Is(err, apikey.ErrAgent) || !strings.Contains(err.Error(), "atlas, scout") {
		t.Fatalf("exchanging a two-agent host token without naming one: %v; want ErrAgent listing its agents", err)
	}
	sess, err := k.Exchange(ctx, host.Token, "scout")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Key.Kind != store.KeySession || sess.Key.Agents[0] != "scout" || !sess.Key.ExpiresAt.Equal(now.Add(apikey.DefaultSessionTTL)) {
		t.Fatalf("session = %+v; want scout's, expiring after %s", sess.Key, apikey.DefaultSessionTTL)
	}
	if _, err := k.Exchange(ctx, sess.Token, ""); !errors.Is(err, apikey.ErrNotExchangeable) {
		t.Fatalf("exchanging a session: %v; want ErrNotExchangeable", err)
	}
	pat, err := k.CreatePersonal(ctx, uuid.New(), []uuid.UUID{uuid.New()}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Exchange(ctx, pat.Token, ""); !errors.Is(err, apikey.ErrNotExchangeable) {
		t.Fatalf("exchanging a personal token: %v; want ErrNotExchangeable", err)
	}
	now = now.Add(apikey.DefaultSessionTTL)
	if _, err := k.Check(ctx, sess.Token); !errors.Is(err, apikey.ErrExpired) {
		t.Fatalf("a session at its expiry: %v; want ErrExpired", err)
	}

	// Revoke takes the public id, the whole token or the row id.
	for _, ref := range []string{apikey.ID(host.Key), host.Token, host.Key.ID.String()} {
		got, err := k.Find(ctx, ref)
		if err != nil || got.ID != host.Key.ID {
			t.Fatalf("Find(%q) = %v, %v; want the host token", ref, got, err)
		}
	}
	if _, err := k.Find(ctx, "sbk_"+host.Key.Lookup); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Find with the wrong kind's prefix: %v; want ErrNotFound", err)
	}
	if _, err := k.Revoke(ctx, apikey.ID(host.Key)); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Exchange(ctx, host.Token, "atlas"); !errors.Is(err, apikey.ErrRevoked) {
		t.Fatalf("exchanging a revoked host token: %v; want ErrRevoked", err)
	}
}
