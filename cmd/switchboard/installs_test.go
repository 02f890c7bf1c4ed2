package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestInstallsCommand: `switchboard installs` lists a workspace install
// and an organisation-wide one with a rotating token whose renewal Slack
// refused, as the API shows them (-json) and as a table; `rotate-key`
// reseals a rotating install's refresh token with its bot token.
func TestInstallsCommand(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, db string) {
		ctx := context.Background()
		st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		oldKey, newKey := "old:"+rotateTestKey(4), "new:"+rotateTestKey(5)
		old, _ := secret.ParseKeys(oldKey)
		seal := func(v, aad string) string {
			s, err := old.Seal([]byte(v), aad)
			if err != nil {
				t.Fatal(err)
			}
			return string(s)
		}
		now := time.Now()
		exp := now.Add(time.Hour)
		if _, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
			TeamID: "T0PLAIN", TeamName: "Plain", BotUserID: "U0B", Scope: "chat:write,commands", BotToken: seal("xoxb-plain", store.SlackInstallationAAD("T0PLAIN")), InstalledBy: "U0ME", Now: now,
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
			TeamID: "E0ORG", TeamName: "Org", EnterpriseID: "E0ORG", EnterpriseName: "Org", EnterpriseInstall: true, BotUserID: "U0O", Scope: "chat:write",
			BotToken: seal("xoxe.xoxb-org", store.SlackInstallationAAD("E0ORG")), RefreshToken: seal("xoxe-1-org", store.SlackRefreshTokenAAD("E0ORG")),
			TokenExpiresAt: &exp, InstalledBy: "U0ADMIN", Now: now,
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{TeamID: "E0ORG", Expect: mustRow(t, st, "E0ORG").RefreshToken, Holder: "h", Until: now.Add(time.Minute), Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SlackInstallationRefreshFailed(ctx, &store.SlackInstallationRefreshFailedParams{TeamID: "E0ORG", Holder: "h", Error: "invalid_refresh_token", Stop: true, Now: now}); err != nil {
			t.Fatal(err)
		}
		installs := func(args ...string) string {
			var out, errOut bytes.Buffer
			if err := run(ctx, append([]string{"installs"}, args...), env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut); err != nil {
				t.Fatalf("installs %v: %v\n%s", args, err, errOut.String())
			}
			return out.String()
		}
		var list core.SlackInstallList
		if err := json.Unmarshal([]byte(installs("-json")), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Installs) != 2 || list.Installs[0].Key != "E0ORG" || !list.Installs[0].OrgWide || list.Installs[0].Renewal != core.RenewalStopped ||
			list.Installs[1].Key != "T0PLAIN" || len(list.Installs[1].Scopes) != 2 || list.Installs[1].Renewal != "" {
			t.Fatalf("installs -json = %+v", list)
		}
		table := installs("list")
		for _, want := range []string{"Org (organisation-wide)", "stopped: invalid_refresh_token", "T0PLAIN", "does not expire", "U0ADMIN"} {
			if !strings.Contains(table, want) {
				t.Errorf("installs list printed\n%s\nwithout %q", table, want)
			}
		}
		if strings.Contains(table, "xox") {
			t.Fatalf("installs list printed a token:\n%s", table)
		}

		var out, errOut bytes.Buffer
		if err := run(ctx, []string{"rotate-key", "-log-level", "error"}, env(map[string]string{"DATABASE_URL": db, "SWITCHBOARD_SECRET_KEY": newKey + "," + oldKey}), nil, &out, &errOut); err != nil {
			t.Fatalf("rotate-key: %v\n%s", err, errOut.String())
		}
		row := mustRow(t, st, "E0ORG")
		onlyNew, _ := secret.ParseKeys(newKey)
		got, err := onlyNew.Open(secret.Sealed(row.RefreshToken), store.SlackRefreshTokenAAD("E0ORG"))
		if err != nil || string(got) != "xoxe-1-org" {
			t.Fatalf("the refresh token after rotate-key opens under the new key to %q, %v", got, err)
		}
	})
}

func mustRow(t *testing.T, st store.Store, key string) *store.SlackInstallation {
	t.Helper()
	row, err := st.SlackInstallationGet(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return row
}
