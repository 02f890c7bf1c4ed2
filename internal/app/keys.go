package app

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// sessionTTLFromEnv reads SWITCHBOARD_SESSION_TTL: how long a session
// exchanged for an agent key lives.
func sessionTTLFromEnv(getenv func(string) string) (time.Duration, error) {
	v := getenv("SWITCHBOARD_SESSION_TTL")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Minute || d > 24*time.Hour {
		return 0, fmt.Errorf("SWITCHBOARD_SESSION_TTL: %q must be a duration from 1m to 24h, such as 15m", v)
	}
	return d, nil
}

// newKeys builds the credentials of the API over st; agent keys may name
// only agents the configuration declares.
func newKeys(st store.Store, agents func() *config.Config, cfg Config) (*apikey.Keys, error) {
	return apikey.New(apikey.Options{
		Store:      st,
		SessionTTL: cfg.SessionTTL,
		Now:        cfg.Now,
		AgentKnownFunc: func(name string) bool {
			_, ok := agents().Find(name) // as last reloaded
			return ok
		},
	})
}

// OpenKeys opens and migrates the store and returns the credentials over
// it, for the keys and tokens commands, which run no service. close closes
// the store.
func OpenKeys(ctx context.Context, cfg Config) (keys *apikey.Keys, close func() error, err error) {
	cfg.defaults()
	agents, err := config.Load(cfg.ConfigPath, cfg.Env)
	if err != nil {
		return nil, nil, err
	}
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: cfg.DatabaseURL, Logger: cfg.Logger, BinaryVersion: cfg.binaryVersion()})
	if err != nil {
		return nil, nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		_ = st.Close()
		return nil, nil, fmt.Errorf("migrating: %w", err)
	}
	keys, err = newKeys(st, func() *config.Config { return agents }, cfg)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return keys, st.Close, nil
}
