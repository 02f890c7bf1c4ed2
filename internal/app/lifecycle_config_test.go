package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
)

func TestFromEnvReadsLeaseShutdownAndInstance(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"SWITCHBOARD_LEASE_TTL":        "20s",
		"SWITCHBOARD_SHUTDOWN_TIMEOUT": "1m",
		"SWITCHBOARD_INSTANCE_ID":      " web-1 ",
	}
	cfg, err := app.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	if cfg.LeaseTTL != 20*time.Second || cfg.ShutdownTimeout != time.Minute || cfg.InstanceID != "web-1" {
		t.Fatalf("FromEnv = lease %s, shutdown %s, instance %q; want 20s, 1m0s, web-1", cfg.LeaseTTL, cfg.ShutdownTimeout, cfg.InstanceID)
	}
	for name, bad := range map[string]string{"SWITCHBOARD_LEASE_TTL": "15", "SWITCHBOARD_SHUTDOWN_TIMEOUT": "0s"} {
		_, err := app.FromEnv(func(k string) string {
			if k == name {
				return bad
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("FromEnv with %s=%q: error %v, want one naming the variable", name, bad, err)
		}
	}
}

func TestDefaultInstanceIDIsStablePerDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := app.DefaultInstanceID("sqlite:" + dir + "/a.db")
	if again := app.DefaultInstanceID("sqlite:" + dir + "/a.db"); again != a {
		t.Fatalf("instance id of one database: %q then %q; want it stable across restarts", a, again)
	}
	if b := app.DefaultInstanceID("sqlite:" + dir + "/b.db"); b == a {
		t.Fatalf("two databases on one host share instance id %q; want them apart", a)
	}
	if pg := app.DefaultInstanceID("postgres://u@db/prod"); pg == a || pg != app.DefaultInstanceID("postgres://u@db/prod") {
		t.Fatalf("Postgres instance id %q: want it stable and unlike the SQLite one", pg)
	}
}
