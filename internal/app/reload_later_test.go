package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestReloadPicksUpConfigCreatedAfterStart: with no switchboard.yaml at
// the start, one created later is loaded, by the file watcher and by a
// reload (SIGHUP). Before, the default file was watched only when it was
// there at the start, and a reload read no file at all.
func TestReloadPicksUpConfigCreatedAfterStart(t *testing.T) {
	for _, c := range []struct {
		name   string
		poll   time.Duration
		reload bool // SIGHUP's path: Reload, with the watcher off
	}{
		{"watcher", 100 * time.Millisecond, false},
		{"sighup", -1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The settings as the binary reads them, in a folder with no
			// switchboard.yaml yet.
			dir := t.TempDir()
			t.Chdir(dir)
			cfgPath := "switchboard.yaml"
			cfg, err := app.FromEnv(func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			cfg.Addr, cfg.DatabaseURL, cfg.ReloadPoll = "-", "sqlite:"+filepath.Join(dir, "sb.db"), c.poll
			cfg.Logger = testenv.Logger(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			a, err := app.Open(ctx, cfg)
			if err != nil {
				t.Fatalf("opening the service: %v", err)
			}
			if err := a.Start(context.Background()); err != nil {
				_ = a.Stop(context.Background())
				t.Fatalf("starting the service: %v", err)
			}
			t.Cleanup(func() { _ = a.Stop(context.Background()) })
			if _, ok := a.Service.Agents().Find("later"); ok {
				t.Fatal("agent later exists before its file does")
			}

			tmp := cfgPath + ".tmp"
			if err := os.WriteFile(tmp, []byte("agents:\n  - name: later\n    answers: {default: true}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, cfgPath); err != nil {
				t.Fatal(err)
			}
			if c.reload {
				if err := a.Reload(ctx); err != nil {
					t.Fatalf("reload: %v", err)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, ok := a.Service.Agents().Find("later"); ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the agent of the file created after the start was not loaded; watched: %v", a.ReloadStatus().Files)
				}
				time.Sleep(20 * time.Millisecond) // polling with a deadline
			}
			if files := a.ReloadStatus().Files; len(files) == 0 || files[0] != cfgPath {
				t.Errorf("watched files %v, want %s first", files, cfgPath)
			}
		})
	}
}
