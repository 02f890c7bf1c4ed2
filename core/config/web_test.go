package config

import (
	"slices"
	"strings"
	"testing"
)

func TestWebSettings(t *testing.T) {
	cfg, err := Parse("", []byte(`
web:
  allow_hosts: ["127.0.0.1:8088", "wiki.internal", "[::1]:9000", "10.1.2.3"]
  search: {provider: brave, api_key_env: BRAVE_API_KEY}
agents:
  - name: atlas
    tools: [web_fetch, web_search]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Web{
		AllowHosts: []string{"127.0.0.1:8088", "wiki.internal", "[::1]:9000", "10.1.2.3"},
		Search:     WebSearch{Provider: "brave", APIKeyEnv: "BRAVE_API_KEY"},
	}
	if !slices.Equal(cfg.Web.AllowHosts, want.AllowHosts) || cfg.Web.Search != want.Search || !cfg.Web.Search.Enabled() {
		t.Fatalf("web = %+v; want %+v", cfg.Web, want)
	}
	if _, err := Parse("", []byte("web:\n  search: {provider: searxng, url: \"http://127.0.0.1:8888/\"}\n"), nil); err != nil {
		t.Fatalf("searxng with a URL and no key: %v", err)
	}
	if _, err := Parse("", []byte("web:\n  search: {provider: tavily, api_key_env: TAVILY_API_KEY, url: \"http://127.0.0.1:9999\"}\n"), nil); err != nil {
		t.Fatalf("tavily with a base URL: %v", err)
	}
}

func TestWebSettingsErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"web:\n  search: {provider: bing, api_key_env: K}\n", `web.search.provider "bing": must be one of brave, tavily, searxng`},
		{"web:\n  search: {api_key_env: K}\n", `web.search.provider "": must be one of`},
		{"web:\n  search: {provider: brave}\n", "web.search.api_key_env: brave needs the name of the environment variable"},
		{"web:\n  search: {provider: tavily}\n", "web.search.api_key_env: tavily needs"},
		{"web:\n  search: {provider: searxng}\n", "web.search.url: searxng needs the instance's base URL"},
		{"web:\n  search: {provider: searxng, url: \"http://s\", api_key_env: K}\n", "web.search.api_key_env: searxng takes no key"},
		{"web:\n  search: {provider: brave, api_key_env: K, url: \"ftp://x\"}\n", `web.search.url "ftp://x": must be an http or https URL`},
		{"web:\n  search: {provider: brave, api_key_env: K, endpoint: x}\n", "endpoint"},
		{"web:\n  allow_hosts: [\"ok\", \"http://intranet/\"]\n", `web.allow_hosts[1]: "http://intranet/": want a host or host:port`},
		{"web:\n  allow_hosts: [\"\"]\n", "web.allow_hosts[0]: empty"},
		{"web:\n  allow_hosts: [\"10.0.0.0/8\"]\n", "web.allow_hosts[0]"},
		{"web:\n  allow_hosts: [\"wiki:http\"]\n", `web.allow_hosts[0]: "wiki:http": port "http" must be 1-65535`},
		{"agents:\n  - name: atlas\n    tools: [web_search]\n", `agent "atlas": tools: web_search needs web.search`},
	} {
		_, err := Parse("", []byte(c.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v; want it to say %q", c.yaml, err, c.want)
		}
	}
}
