package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// TestSlackInstallReadsUseIndexes: the reads the token renewer makes on
// every instance every check (the tokens due), /readyz (the stopped
// renewals), the installs view's page and the lookup of each event's
// install are index scans on a table of 20,000 installs (a tenth rotating,
// a few stopped) and 50,000 teams served by organisation-wide installs.
func TestSlackInstallReadsUseIndexes(t *testing.T) {
	rec := &recorder{}
	s := openTestStore(t, func(o *Options) { o.tracer = rec })
	ctx := context.Background()
	pool := s.Pool()
	for _, q := range []string{
		`INSERT INTO slack_installations (team_id, bot_user_id, bot_token, created_at, updated_at, refresh_token, token_expires_at, refresh_stopped, enterprise_install, enterprise_id)
		 SELECT CASE WHEN n % 100 = 0 THEN 'E' ELSE 'T' END || lpad(n::text, 8, '0'), 'U' || n, 'v1:k:' || n, now(), now(),
		        CASE WHEN n % 10 = 0 THEN 'v1:k:r' || n ELSE '' END,
		        CASE WHEN n % 10 = 0 THEN now() + (n || ' seconds')::interval END,
		        n % 1000 = 0, n % 100 = 0, CASE WHEN n % 100 = 0 THEN 'E' || lpad(n::text, 8, '0') ELSE '' END
		 FROM generate_series(1, 20000) n`,
		`INSERT INTO slack_installation_teams (team_id, installation, last_event_at)
		 SELECT 'T9' || lpad(n::text, 8, '0'), 'E' || lpad(((n % 200 + 1) * 100)::text, 8, '0'), now() FROM generate_series(1, 50000) n`,
		`VACUUM ANALYZE slack_installations`, `VACUUM ANALYZE slack_installation_teams`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("filling the tables: %v\n%s", err, q)
		}
	}
	now := time.Now()
	explain := func(name string, call func() error) {
		t.Helper()
		indexed(t, rec, pool, name, call)
	}
	explain("the tokens due for renewal", func() error {
		_, err := s.SlackInstallationExpiring(ctx, &store.SlackInstallationExpiringParams{Before: now.Add(2 * time.Hour), Now: now, Limit: 100})
		return err
	})
	explain("the stopped renewals of /readyz", func() error {
		_, err := s.SlackInstallationRefreshStopped(ctx, 10)
		return err
	})
	explain("a page of the installs view", func() error {
		_, err := s.SlackInstallationList(ctx, &store.SlackInstallationListParams{AfterTeamID: "T00005000", Limit: 100})
		return err
	})
	explain("an event's install, by a team an org-wide install served", func() error {
		_, err := s.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: "T900000123", EnterpriseID: "E00000300"})
		return err
	})
}
