package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestServeJSONLogsAndAdmin: with SWITCHBOARD_LOG_FORMAT=json every log
// line is a JSON object, and with SWITCHBOARD_ADMIN_ADDR pprof answers on
// that address and not on the API's.
func TestServeJSONLogsAndAdmin(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	var out bytes.Buffer
	var logs testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0"}, env(map[string]string{
			"DATABASE_URL": db, "SWITCHBOARD_LOG_FORMAT": "json", "SWITCHBOARD_ADMIN_ADDR": "127.0.0.1:0",
		}), nil, &out, &logs)
	}()
	// Both addresses come from the log lines that announce them.
	var api, admin string
	deadline := time.Now().Add(20 * time.Second)
	for api == "" || admin == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no listening lines in the log after 20s:\n%s", logs.String())
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned early: %v\n%s", err, logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if line == "" {
				continue
			}
			var l map[string]any
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("a log line is not JSON: %q (%v)", line, err)
			}
			switch l["msg"] {
			case "listening":
				api, _ = l["addr"].(string)
			case "admin (pprof) listening":
				admin, _ = l["addr"].(string)
			}
		}
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + admin + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ on the admin address = %d %.200q, want 200 and the profile index", code, body)
	}
	if code, _ := get("http://" + api + "/debug/pprof/"); code == http.StatusOK {
		t.Errorf("GET /debug/pprof/ on the API address answered 200; pprof must only be on the admin address")
	}
	if code, body := get("http://" + api + "/metrics"); code != http.StatusOK || !strings.Contains(body, "switchboard_up 1") {
		t.Errorf("GET /metrics = %d %.200q, want 200 with switchboard_up 1", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
