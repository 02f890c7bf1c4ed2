package app

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/telemetry"
)

// recordingEnv is an empty environment that remembers every name read.
type recordingEnv struct {
	mu   sync.Mutex
	read map[string]bool
}

func (r *recordingEnv) get(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read[name] = true
	return ""
}

// TestSettingsRegistryMatchesReads: every variable FromEnv and the readers
// of Config.Env read is in Settings (so docs/reference/settings.md lists
// it), and every variable Settings names is read by one of them.
func TestSettingsRegistryMatchesReads(t *testing.T) {
	t.Chdir(t.TempDir())
	rec := &recordingEnv{read: map[string]bool{}}
	cfg, err := FromEnv(rec.get)
	if err != nil {
		t.Fatal(err)
	}
	config.DefaultModel(cfg.Env)
	creds := credentials(cfg.Env)
	for _, m := range []string{"anthropic:claude-sonnet-4-5", "openai:gpt-4.1-mini"} {
		_, _ = creds(&config.Agent{Name: "a", Model: m}) // no key: an error, after reading the variables
	}
	_ = cfg.secrets(&config.Config{})
	_, _ = NewSSO(cfg, nil, config.SSO{}) // single sign-on's settings
	tr, err := telemetry.NewTracing(context.Background(), telemetry.TracingOptions{Getenv: cfg.Env})
	if err != nil {
		t.Fatal(err)
	}
	_ = tr.Shutdown(context.Background())

	var undocumented []string
	for name := range rec.read {
		if !Documented(name) {
			undocumented = append(undocumented, name)
		}
	}
	sort.Strings(undocumented)
	if len(undocumented) > 0 {
		t.Errorf("read but not documented in app.Settings (add a row, then go test ./cmd/switchboard -run TestReference -update): %q", undocumented)
	}
	var unread []string
	for _, s := range Settings {
		for _, n := range s.Names {
			if !rec.read[n] && !slices.Contains(unread, n) {
				unread = append(unread, n)
			}
		}
	}
	if len(unread) > 0 {
		t.Errorf("documented in app.Settings but read by nothing: %q", unread)
	}
}
