package doctor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/doctor"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestDoctorSlackInstalls: with the install flow on, a rotating token
// whose renewal works is ok, and one whose renewal Slack refused for good
// fails the "slack installs" check, naming the install and saying to
// reinstall.
func TestDoctorSlackInstalls(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		s := newSetup(t, db)
		cfg := s.cfg
		cfg.SlackClientID, cfg.SlackClientSecret = "1.2", "secret"
		ctx := context.Background()
		st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		exp := time.Now().Add(10 * time.Hour)
		if _, err := st.SlackInstallationSave(ctx, &store.SlackInstallationSaveParams{
			TeamID: "T0ROT", TeamName: "Rotating", BotUserID: "U0B", BotToken: "v1:k:bot", RefreshToken: "v1:k:ref", TokenExpiresAt: &exp,
		}); err != nil {
			t.Fatal(err)
		}
		rs, out := run(t, cfg, "")
		if r := find(rs, "slack installs"); r == nil || r.Status != doctor.StatusOK || !strings.Contains(r.Detail, "1 installed, 1 with rotating tokens") {
			t.Fatalf("slack installs = %+v, want ok:\n%s", r, out)
		}
		if _, err := st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{TeamID: "T0ROT", Expect: "v1:k:ref", Holder: "h", Until: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SlackInstallationRefreshFailed(ctx, &store.SlackInstallationRefreshFailedParams{TeamID: "T0ROT", Holder: "h", Error: "invalid_refresh_token", Stop: true}); err != nil {
			t.Fatal(err)
		}
		rs, out = run(t, cfg, "")
		r := find(rs, "slack installs")
		if r == nil || r.Status != doctor.StatusFail || !strings.Contains(r.Detail, "Rotating (T0ROT): invalid_refresh_token") || !strings.Contains(r.Fix, "reinstall the app") {
			t.Fatalf("slack installs = %+v, want a failure naming T0ROT and saying to reinstall:\n%s", r, out)
		}
	})
}
