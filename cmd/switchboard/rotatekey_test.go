package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

func rotateTestKey(b byte) string {
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32))
}

// eachDatabase runs f with a DATABASE_URL of a fresh SQLite file, and of a
// fresh Postgres schema when TEST_DATABASE_URL is set.
func eachDatabase(t *testing.T, f func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, "sqlite:"+testenv.SQLiteFile(t)) })
	t.Run("postgres", func(t *testing.T) {
		base := testenv.PostgresURL(t)
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		f(t, base+sep+"switchboard_schema="+testenv.PostgresSchema(t))
	})
}

// TestRotateKeyCommand: `switchboard rotate-key` reseals a bot token sealed
// under the old key with the new first key of SWITCHBOARD_SECRET_KEY; run
// again it reseals nothing; and when a token opens under no listed key it
// says so and fails (main exits 1), leaving the token as it was.
func TestRotateKeyCommand(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, db string) {
		ctx := context.Background()
		const team, token = "T0ROT", "xoxb-rotate-me-5e1d"
		oldKey, newKey := "old:"+rotateTestKey(1), "new:"+rotateTestKey(2)
		st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		old, err := secret.ParseKeys(oldKey)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := old.Seal([]byte(token), store.SlackInstallationAAD(team))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
			TeamID: team, TeamName: "Rotation", BotUserID: "U0BOT", BotToken: string(sealed), InstalledBy: "U0ME", Now: time.Now(),
		}); err != nil {
			t.Fatal(err)
		}
		rotate := func(keys string) (string, error) {
			var out, errOut bytes.Buffer
			err := run(ctx, []string{"rotate-key", "-log-level", "error"},
				env(map[string]string{"DATABASE_URL": db, "SWITCHBOARD_SECRET_KEY": keys}), nil, &out, &errOut)
			return out.String(), err
		}
		stored := func() secret.Sealed {
			t.Helper()
			in, err := st.SlackInstallationGet(ctx, team)
			if err != nil {
				t.Fatal(err)
			}
			return secret.Sealed(in.BotToken)
		}

		out, err := rotate(newKey + "," + oldKey)
		if err != nil || !strings.Contains(out, `resealed 1 secrets under key "new" (0 already were)`) {
			t.Fatalf("rotate-key with new,old = %q, %v; want one secret resealed under new", out, err)
		}
		after := stored()
		if after.KeyID() != "new" {
			t.Fatalf("the token after rotate-key is sealed under %q, want new", after.KeyID())
		}
		onlyNew, _ := secret.ParseKeys(newKey)
		if got, err := onlyNew.Open(after, store.SlackInstallationAAD(team)); err != nil || string(got) != token {
			t.Fatalf("the resealed token opens under the new key alone to %q, %v; want the token", got, err)
		}

		out, err = rotate(newKey)
		if err != nil || !strings.Contains(out, `resealed 0 secrets under key "new" (1 already were)`) {
			t.Fatalf("a second rotate-key = %q, %v; want nothing resealed", out, err)
		}
		if stored() != after {
			t.Fatal("a second rotate-key changed a token already under the current key")
		}

		out, err = rotate("other:" + rotateTestKey(3))
		if err == nil || !strings.Contains(err.Error(), "open under no key") {
			t.Fatalf("rotate-key with a key that opens nothing returned %v; want an error (exit 1) saying a secret opens under no key", err)
		}
		if !strings.Contains(out, "not opened, left as it is: slack bot token of team "+team) {
			t.Errorf("rotate-key printed %q; want the unopened token named", out)
		}
		if stored() != after {
			t.Fatal("a token no key opened was changed")
		}

		if _, err := rotate(""); err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_SECRET_KEY") {
			t.Fatalf("rotate-key without a key returned %v; want an error naming SWITCHBOARD_SECRET_KEY", err)
		}
	})
}
