package testenv

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/switchboardhq/switchboard/internal/pgbouncer"
)

// PgBouncer starts a PgBouncer (the Debian package's binary) in pool mode
// mode ("transaction" or "session") in front of the Postgres of
// TEST_DATABASE_URL, stopped when the test ends, and returns the URL of
// database through it. It is configured as a team's would be, with nothing
// for Switchboard: no ignore_startup_parameters, trust authentication for
// the URL's user. Without the program the test skips, unless CI or
// SWITCHBOARD_REQUIRE_POSTGRES makes that a failure.
func PgBouncer(tb testing.TB, mode, database string) string {
	tb.Helper()
	return PgBouncerServer(tb, mode)(database)
}

// PgBouncerServer starts one PgBouncer as PgBouncer does and returns a
// func giving the URL of a database through it: for a test that opens many
// stores, each on a database of its own, behind one pooler.
func PgBouncerServer(tb testing.TB, mode string) func(database string) string {
	tb.Helper()
	RequirePgBouncer(tb)
	s, err := pgbouncer.Start(context.Background(), pgbouncer.Options{ServerURL: PostgresURL(tb), Mode: mode})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("pgbouncer (%s mode) output:\n%s", mode, s.Log())
		}
		s.Stop()
	})
	return s.URL
}

// RequirePgBouncer skips the test when the pgbouncer program is missing,
// unless CI or SWITCHBOARD_REQUIRE_POSTGRES makes that a failure.
func RequirePgBouncer(tb testing.TB) {
	tb.Helper()
	if _, err := pgbouncer.Find(); errors.Is(err, pgbouncer.ErrNotInstalled) {
		if os.Getenv("CI") == "true" || os.Getenv("SWITCHBOARD_REQUIRE_POSTGRES") == "1" {
			tb.Fatal("pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)")
		}
		tb.Skip("pgbouncer is not installed")
	}
}
