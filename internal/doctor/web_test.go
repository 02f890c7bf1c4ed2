package doctor_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/doctor"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestDoctorChecksWebSearch: with web.search set, doctor says whether its
// key variable is set and whether the provider (a local fake Brave)
// accepts the key; without it, it says nothing of web search.
func TestDoctorChecksWebSearch(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	brave := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "brave-good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"type":"search","web":{"results":[{"title":"Switchboard","url":"https://switchboard.example/","description":"agents"}]}}`))
	}))
	t.Cleanup(brave.Close)
	cfg := s.cfg
	base := cfg.Env
	key := ""
	cfg.Env = func(k string) string {
		if k == "BRAVE_API_KEY" {
			return key
		}
		return base(k)
	}

	rs, out := run(t, cfg, "")
	if r := find(rs, "web search"); r != nil {
		t.Fatalf("web search checked with no web.search: %+v", r)
	}

	write(t, cfg.ConfigPath, fmt.Sprintf("agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\n    tools: [web_fetch, web_search]\n"+
		"web:\n  allow_hosts: [wiki.internal]\n  search: {provider: brave, api_key_env: BRAVE_API_KEY, url: %q}\n", brave.URL))
	for _, c := range []struct {
		key    string
		status doctor.Status
		want   string
	}{
		{"", doctor.StatusFail, "set BRAVE_API_KEY to the brave API key"},
		{"brave-bad", doctor.StatusFail, "the provider refused the key: set a valid key in BRAVE_API_KEY"},
		{"brave-good", doctor.StatusOK, "brave answers a search"},
	} {
		key = c.key
		rs, out = run(t, cfg, "")
		r := find(rs, "web search")
		if r == nil || r.Status != c.status || !strings.Contains(r.Detail+" "+r.Fix, c.want) {
			t.Errorf("key %q: web search = %+v; want %s saying %q:\n%s", c.key, r, c.status, c.want, out)
		}
	}
	if r := find(rs, "web fetch"); r == nil || r.Status != doctor.StatusOK || !strings.Contains(r.Detail, "offered to ana; private hosts allowed: wiki.internal") {
		t.Errorf("web fetch = %+v; want it offered to ana with wiki.internal allowed:\n%s", r, out)
	}
}
