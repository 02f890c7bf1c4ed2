package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

func TestMetricsNeedTheTokenWhenOneIsSet(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs(filepath.Join("testdata", "slack_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, token, header, proxy string
		want                       int
	}{
		{"token set, none sent", "s3cret-token", "", "", http.StatusUnauthorized},
		{"token set, wrong one", "s3cret-token", "Bearer nope", "", http.StatusUnauthorized},
		{"token set, right one", "s3cret-token", "Bearer s3cret-token", "", http.StatusOK},
		{"no token set", "", "", "", http.StatusOK},
		{"no token set, through a proxy", "", "", "Via", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := app.Open(context.Background(), app.Config{
				Addr:        "-",
				DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "switchboard.db"),
				APIToken:    tc.token,
				Env:         func(k string) string { return map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}[k] },
				Logger:      testenv.Logger(t),
			})
			if err != nil {
				t.Fatalf("opening the service: %v", err)
			}
			t.Cleanup(func() { _ = a.Stop(context.Background()) })
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.RemoteAddr, req.Host = "127.0.0.1:5555", "127.0.0.1:8080" // loopback is no exemption from a token
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			if tc.proxy != "" {
				req.Header.Set(tc.proxy, "1.1 nginx")
			}
			rec := httptest.NewRecorder()
			a.Mux.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("GET /metrics with Authorization %q = %d %s; want %d", tc.header, rec.Code, rec.Body, tc.want)
			}
			if leaked := strings.Contains(rec.Body.String(), "switchboard_work_items"); leaked != (tc.want == http.StatusOK) {
				t.Fatalf("GET /metrics = %d with body %q; want the gauges only when authorised", rec.Code, rec.Body)
			}
		})
	}
}

func TestAllowedOriginsFromEnv(t *testing.T) {
	t.Parallel()
	cases := []struct {
		value   string
		want    string
		wantErr bool
	}{
		{"", "[]", false},
		{"https://app.example.com", "[https://app.example.com]", false},
		{"https://App.example.com:443, http://localhost:3000", "[https://app.example.com http://localhost:3000]", false},
		{"app.example.com", "", true},
		{"https://app.example.com/ui", "", true},
		{"*", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			cfg, err := app.FromEnv(func(k string) string {
				if k == "SWITCHBOARD_ALLOWED_ORIGINS" {
					return tc.value
				}
				return ""
			})
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_ALLOWED_ORIGINS") {
					t.Fatalf("FromEnv with SWITCHBOARD_ALLOWED_ORIGINS=%q: %v; want an error naming the variable", tc.value, err)
				}
				return
			}
			if err != nil || fmt.Sprint(cfg.AllowedOrigins) != tc.want {
				t.Fatalf("FromEnv with SWITCHBOARD_ALLOWED_ORIGINS=%q = %v, %v; want %s", tc.value, cfg.AllowedOrigins, err, tc.want)
			}
		})
	}
}
