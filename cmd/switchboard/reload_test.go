package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestServeReloadsOnSIGHUP: `switchboard serve` reloads switchboard.yaml on
// SIGHUP; a broken file is refused with the field named and the service
// keeps running.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "switchboard.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("agents:\n  - name: ana\n    model: scripted:demo\n")
	var logs, out testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0"}, env(map[string]string{
			"DATABASE_URL": "sqlite:" + filepath.Join(dir, "sb.db"), "SWITCHBOARD_LOG_FORMAT": "json",
			"SWITCHBOARD_CONFIG": cfgPath, "SWITCHBOARD_RELOAD_POLL": "off",
		}), nil, &out, &logs)
	}()
	waitLog := func(match func(map[string]any) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var l map[string]any
				if json.Unmarshal([]byte(line), &l) == nil && match(l) {
					return
				}
			}
			select {
			case err := <-done:
				t.Fatalf("serve returned: %v\n%s", err, logs.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
		t.Fatalf("the log line never came:\n%s", logs.String())
	}
	waitLog(func(l map[string]any) bool { return l["msg"] == "listening" })

	write("agents:\n  - name: ana\n    model: scripted:demo\n  - name: bo\n    model: scripted:demo\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(func(l map[string]any) bool { return l["msg"] == "configuration reloaded" && l["agents"] == float64(2) })

	write("agents:\n  - name: ana\n    persnoa: x\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(func(l map[string]any) bool {
		e, _ := l["error"].(string)
		return l["msg"] == "configuration reload refused" && strings.Contains(e, `unknown field "persnoa" in agents[0]`)
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
