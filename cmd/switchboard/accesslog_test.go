package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestServeAccessLog: every HTTP request the service answers is one JSON
// log line with its method, path, status, duration and size; the token and
// the query string never reach the log.
func TestServeAccessLog(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const token = "op-token-access-log-9f3b"
	var logs, out testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0"}, env(map[string]string{
			"DATABASE_URL": "sqlite:" + testenv.SQLiteFile(t), "SWITCHBOARD_LOG_FORMAT": "json",
			"SWITCHBOARD_API_TOKEN": token,
		}), nil, &out, &logs)
	}()
	lines := func() []map[string]any {
		var ls []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var l map[string]any
			if line != "" && json.Unmarshal([]byte(line), &l) == nil {
				ls = append(ls, l)
			}
		}
		return ls
	}
	find := func(match func(map[string]any) bool) map[string]any {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			for _, l := range lines() {
				if match(l) {
					return l
				}
			}
			select {
			case err := <-done:
				t.Fatalf("serve returned early: %v\n%s", err, logs.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
		return nil
	}
	listening := find(func(l map[string]any) bool { return l["msg"] == "listening" })
	if listening == nil {
		t.Fatalf("no listening line:\n%s", logs.String())
	}
	base := "http://" + listening["addr"].(string)
	do := func(auth string) {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/usage?days=7", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do(token)
	do("")
	for _, status := range []float64{200, 401} {
		l := find(func(l map[string]any) bool { return l["msg"] == "http request" && l["status"] == status })
		if l == nil {
			t.Fatalf("no access log line with status %v:\n%s", status, logs.String())
		}
		if l["method"] != "GET" || l["path"] != "/api/usage" || l["bytes"].(float64) <= 0 || l["duration_ms"] == nil {
			t.Fatalf("access log line %v, want method, path, bytes and duration", l)
		}
	}
	if s := logs.String(); strings.Contains(s, token) || strings.Contains(s, "days=7") {
		t.Fatalf("the log holds the token or the query string:\n%s", s)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
