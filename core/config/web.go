package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Web are the settings of the web tools (web: in switchboard.yaml).
//
//	web:
//	  allow_hosts: ["wiki.internal", "127.0.0.1:8088"]
//	  search: {provider: brave, api_key_env: BRAVE_API_KEY}
//
// web_fetch is offered to the agents that list it in their tools;
// web_search too, once search names a provider. Neither ever connects to
// a loopback, private, link-local or metadata address unless allow_hosts
// names it. Changes take effect at the next start.
type Web struct {
	// AllowHosts are the private or loopback hosts (host, or host:port)
	// the web tools may reach all the same: an intranet, a test's local
	// server. An address entry also allows a name that resolves to it.
	AllowHosts []string `yaml:"allow_hosts,omitempty" json:"allow_hosts,omitempty"`
	// Search is the provider behind web_search; none: no web_search.
	Search WebSearch `yaml:"search,omitempty" json:"search,omitempty"`
}

// WebSearch is the provider behind web_search.
type WebSearch struct {
	// Provider is brave (Brave Search API), tavily or searxng (a
	// self-hosted SearXNG with the json format on).
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"`
	// APIKeyEnv names the environment variable holding the provider's key;
	// required for brave and tavily.
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// URL is the provider's base URL: required for searxng (the
	// instance), optional for brave and tavily (their public API).
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
}

// WebProviders are the providers web.search.provider may name.
var WebProviders = []string{"brave", "tavily", "searxng"}

// Enabled reports whether a search provider is configured.
func (s WebSearch) Enabled() bool { return s.Provider != "" }

func (w Web) validate() error {
	for i, h := range w.AllowHosts {
		if err := checkAllowHost(h); err != nil {
			return fmt.Errorf("web.allow_hosts[%d]: %w", i, err)
		}
	}
	s := w.Search
	if s == (WebSearch{}) {
		return nil
	}
	if !slices.Contains(WebProviders, s.Provider) {
		return fmt.Errorf("web.search.provider %q: must be one of %s", s.Provider, strings.Join(WebProviders, ", "))
	}
	switch {
	case s.Provider != "searxng" && s.APIKeyEnv == "":
		return fmt.Errorf("web.search.api_key_env: %s needs the name of the environment variable holding its key", s.Provider)
	case s.Provider == "searxng" && s.APIKeyEnv != "":
		return errors.New("web.search.api_key_env: searxng takes no key")
	case s.Provider == "searxng" && s.URL == "":
		return errors.New("web.search.url: searxng needs the instance's base URL")
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("web.search.url %q: must be an http or https URL", s.URL)
		}
	}
	return nil
}

// checkAllowHost accepts host, host:port, [v6]:port or a bare address.
func checkAllowHost(h string) error {
	if strings.TrimSpace(h) == "" {
		return errors.New("empty")
	}
	if strings.Contains(h, "/") {
		return fmt.Errorf("%q: want a host or host:port, not a URL or a range", h)
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return nil
	}
	host := h
	if hh, p, err := net.SplitHostPort(h); err == nil {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("%q: port %q must be 1-65535", h, p)
		}
		host = hh
	}
	if host == "" || strings.ContainsAny(host, " :[]@?#") {
		if _, err := netip.ParseAddr(host); err != nil {
			return fmt.Errorf("%q: want a host or host:port", h)
		}
	}
	return nil
}

// validateWeb checks web: and that an agent listing web_search has a
// provider to search with.
func (c *Config) validateWeb() error {
	if err := c.Web.validate(); err != nil {
		return err
	}
	if c.Web.Search.Enabled() {
		return nil
	}
	for _, a := range c.Agents {
		if slices.Contains(a.Tools, "web_search") {
			return fmt.Errorf("agent %q: tools: web_search needs web.search (a provider: %s)", a.Name, strings.Join(WebProviders, ", "))
		}
	}
	return nil
}
