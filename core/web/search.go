package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// Result is one search hit.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// Searcher runs a web search through a provider.
type Searcher interface {
	// Search returns at most limit results for query, best first.
	Search(ctx context.Context, query string, limit int) ([]Result, error)
}

// ProviderError is a provider's answer other than 200 OK.
type ProviderError struct {
	Provider string
	Status   int
	Body     string // the start of the provider's answer
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("%s search: the provider answered %d %s: %s", e.Provider, e.Status, http.StatusText(e.Status), e.Body)
}

// The search providers.
const (
	ProviderBrave   = "brave"
	ProviderTavily  = "tavily"
	ProviderSearXNG = "searxng"
)

// Providers are the search providers, as web.search.provider names them.
var Providers = []string{ProviderBrave, ProviderTavily, ProviderSearXNG}

// Default base URLs of the hosted providers.
const (
	BraveURL  = "https://api.search.brave.com"
	TavilyURL = "https://api.tavily.com"
)

// SearchOptions configure a Searcher.
type SearchOptions struct {
	// Provider is one of Providers.
	Provider string
	// APIKey is the provider's key; required for brave and tavily.
	APIKey string
	// URL is the provider's base URL: required for searxng (the instance),
	// optional for brave and tavily (default BraveURL, TavilyURL).
	URL string
	// HTTPClient makes the requests (default: one with a 20s timeout).
	// The provider is a host the operator chose, so this is a plain
	// client, not a guarded one.
	HTTPClient *http.Client
	// Logger (default: discard).
	Logger *slog.Logger
}

func (o *SearchOptions) validate() error {
	if !slices.Contains(Providers, o.Provider) {
		return fmt.Errorf("Provider %q must be one of %s", o.Provider, strings.Join(Providers, ", "))
	}
	if o.Provider != ProviderSearXNG && o.APIKey == "" {
		return fmt.Errorf("APIKey is required for %s", o.Provider)
	}
	if o.Provider == ProviderSearXNG && o.URL == "" {
		return errors.New("URL is required for searxng: the instance's base URL")
	}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("URL %q must be an http or https URL", o.URL)
		}
	}
	return nil
}

// NewSearcher builds the Searcher of o.Provider.
func NewSearcher(o SearchOptions) (Searcher, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("web search: %w", err)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p := &provider{o: o}
	switch o.Provider {
	case ProviderBrave:
		p.base = cmp.Or(o.URL, BraveURL)
	case ProviderTavily:
		p.base = cmp.Or(o.URL, TavilyURL)
	default:
		p.base = o.URL
	}
	p.base = strings.TrimSuffix(p.base, "/")
	return p, nil
}

// provider is every provider: they differ in one request and one
// response shape.
type provider struct {
	o    SearchOptions
	base string
}

// maxResponse bounds a provider's answer.
const maxResponse = 4 << 20

func (p *provider) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, errors.New("the query is empty")
	}
	limit = max(limit, 1)
	req, err := p.request(ctx, query, limit)
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", p.o.Provider, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.o.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", p.o.Provider, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("%s search: reading the answer: %w", p.o.Provider, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &ProviderError{Provider: p.o.Provider, Status: resp.StatusCode, Body: cutUTF8(strings.TrimSpace(string(body)), 300)}
	}
	results, err := p.decode(body)
	if err != nil {
		return nil, fmt.Errorf("%s search: decoding the answer: %w", p.o.Provider, err)
	}
	for i := range results {
		results[i].Title = plainText(results[i].Title)
		results[i].Snippet = plainText(results[i].Snippet)
	}
	if len(results) > limit {
		results = results[:limit]
	}
	p.o.Logger.DebugContext(ctx, "web search", "provider", p.o.Provider, "results", len(results))
	return results, nil
}

func (p *provider) request(ctx context.Context, query string, limit int) (*http.Request, error) {
	switch p.o.Provider {
	case ProviderBrave:
		// https://api-dashboard.search.brave.com/app/documentation/web-search
		q := url.Values{"q": {query}, "count": {strconv.Itoa(min(limit, 20))}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/res/v1/web/search?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Subscription-Token", p.o.APIKey)
		return req, nil
	case ProviderTavily:
		// https://docs.tavily.com/api-reference/endpoint/search
		body, err := json.Marshal(map[string]any{"query": query, "max_results": min(limit, 20)})
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/search", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+p.o.APIKey)
		return req, nil
	default:
		// https://docs.searxng.org/dev/search_api.html (the instance must
		// list json under search.formats)
		q := url.Values{"q": {query}, "format": {"json"}}
		return http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/search?"+q.Encode(), nil)
	}
}

func (p *provider) decode(body []byte) ([]Result, error) {
	type hit struct {
		Title       string `json:"title"`
		URL         string `json:"url"`
		Description string `json:"description"` // brave
		Content     string `json:"content"`     // tavily, searxng
	}
	var hits []hit
	switch p.o.Provider {
	case ProviderBrave:
		var r struct {
			Web struct {
				Results []hit `json:"results"`
			} `json:"web"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		hits = r.Web.Results
	default:
		var r struct {
			Results []hit `json:"results"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		hits = r.Results
	}
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		if h.URL == "" {
			continue
		}
		out = append(out, Result{Title: h.Title, URL: h.URL, Snippet: cmp.Or(h.Description, h.Content)})
	}
	return out, nil
}

// plainText is s without HTML tags or entities (Brave marks the matched
// words with <strong>).
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}
