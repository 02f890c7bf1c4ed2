package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/core/web"
)

// The fakes answer as the providers document it (Brave's web search API,
// Tavily's /search, SearXNG's JSON format), and check each request is
// one the real provider would accept.

func braveFake(t *testing.T) *httptest.Server {
	return fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search" {
			t.Errorf("brave: %s %s; want GET /res/v1/web/search", r.Method, r.URL.Path)
		}
		if r.Header.Get("X-Subscription-Token") != "brave-key" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`))
			return
		}
		if q := r.URL.Query(); q.Get("q") != "harbour tides" || q.Get("count") != "2" {
			t.Errorf("brave: query %v; want q=harbour tides, count=2", q)
		}
		_, _ = w.Write([]byte(`{"type":"search","query":{"original":"harbour tides"},"web":{"type":"search","results":[
			{"title":"Tide tables","url":"https://tides.example/harbour","description":"Today&#39;s <strong>tides</strong> for the harbour","age":"1 day"},
			{"title":"Harbour office","url":"https://harbour.example/","description":"Opening hours"},
			{"title":"Third","url":"https://third.example/","description":"cut by count"}]}}`))
	})
}

func tavilyFake(t *testing.T) *httptest.Server {
	return fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/search" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("tavily: %s %s (%s); want POST /search with JSON", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		if r.Header.Get("Authorization") != "Bearer tvly-key" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"detail":{"error":"Unauthorized: missing or invalid API key."}}`))
			return
		}
		var body struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil || body.Query != "harbour tides" || body.MaxResults != 2 {
			t.Errorf("tavily: body %s; want query and max_results 2", raw)
		}
		_, _ = w.Write([]byte(`{"query":"harbour tides","answer":null,"images":[],"results":[
			{"title":"Tide tables","url":"https://tides.example/harbour","content":"Today's tides for the harbour","score":0.93},
			{"title":"Harbour office","url":"https://harbour.example/","content":"Opening hours","score":0.71}],"response_time":0.8}`))
	})
}

func searxngFake(t *testing.T) *httptest.Server {
	return fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/searx/search" {
			t.Errorf("searxng: %s %s; want GET /searx/search", r.Method, r.URL.Path)
		}
		if q := r.URL.Query(); q.Get("q") != "harbour tides" || q.Get("format") != "json" {
			t.Errorf("searxng: query %v; want q and format=json", q)
		}
		_, _ = w.Write([]byte(`{"query":"harbour tides","number_of_results":0,"results":[
			{"url":"https://tides.example/harbour","title":"Tide tables","content":"Today's tides for the harbour","engine":"duckduckgo","score":1.5},
			{"url":"https://harbour.example/","title":"Harbour office","content":"Opening hours","engine":"brave"},
			{"url":"https://third.example/","title":"Third","content":"cut by count"}],"answers":[],"suggestions":[]}`))
	})
}

func fake(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestSearchProviders: each provider, through web_search as the model
// calls it, returns the same shape: title, URL and a plain-text snippet,
// at most count of them.
func TestSearchProviders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		provider, key, path string
		srv                 func(*testing.T) *httptest.Server
	}{
		{web.ProviderBrave, "brave-key", "", braveFake},
		{web.ProviderTavily, "tvly-key", "", tavilyFake},
		{web.ProviderSearXNG, "", "/searx", searxngFake},
	}
	want := []web.Result{
		{Title: "Tide tables", URL: "https://tides.example/harbour", Snippet: "Today's tides for the harbour"},
		{Title: "Harbour office", URL: "https://harbour.example/", Snippet: "Opening hours"},
	}
	for _, c := range cases {
		t.Run(c.provider, func(t *testing.T) {
			t.Parallel()
			srv := c.srv(t)
			s, err := web.NewSearcher(web.SearchOptions{Provider: c.provider, APIKey: c.key, URL: srv.URL + c.path})
			if err != nil {
				t.Fatal(err)
			}
			reg := tool.NewRegistry()
			if err := web.RegisterSearch(reg, s); err != nil {
				t.Fatal(err)
			}
			tl, _ := reg.Get(web.ToolSearch)
			if !tl.OptIn() || !tl.ReadOnly() || tl.Risk() != tool.RiskLow {
				t.Fatalf("web_search: opt-in %v, read-only %v, risk %s; want an opt-in, read-only, low-risk tool", tl.OptIn(), tl.ReadOnly(), tl.Risk())
			}
			res := tl.Call(context.Background(), nil, json.RawMessage(`{"query": "harbour tides", "count": 2}`))
			if res.IsError {
				t.Fatalf("web_search failed: %s", res.Output)
			}
			var out web.SearchOut
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != len(want) {
				t.Fatalf("results %+v; want %+v", out.Results, want)
			}
			for i := range want {
				if out.Results[i] != want[i] {
					t.Errorf("result %d = %+v; want %+v", i, out.Results[i], want[i])
				}
			}
		})
	}
}

// TestSearchRefusedKey: a provider refusing the key is an error that says
// so and shows the provider's answer, never the key.
func TestSearchRefusedKey(t *testing.T) {
	t.Parallel()
	srv := braveFake(t)
	s, err := web.NewSearcher(web.SearchOptions{Provider: web.ProviderBrave, APIKey: "wrong-key-123", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Search(context.Background(), "harbour tides", 2)
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "SUBSCRIPTION_TOKEN_INVALID") {
		t.Fatalf("err %v; want the 401 and the provider's reason", err)
	}
	var pe *web.ProviderError
	if !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized || pe.Provider != "brave" {
		t.Fatalf("err %#v; want a *web.ProviderError with the 401", err)
	}
	if strings.Contains(err.Error(), "wrong-key-123") {
		t.Fatalf("the error shows the key: %v", err)
	}
}

func TestSearchOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    web.SearchOptions
		want string
	}{
		{web.SearchOptions{Provider: "bing", APIKey: "k"}, `Provider "bing" must be one of brave, tavily, searxng`},
		{web.SearchOptions{Provider: "brave"}, "APIKey is required for brave"},
		{web.SearchOptions{Provider: "tavily"}, "APIKey is required for tavily"},
		{web.SearchOptions{Provider: "searxng"}, "URL is required for searxng"},
		{web.SearchOptions{Provider: "searxng", URL: "ftp://search.internal"}, `URL "ftp://search.internal" must be an http or https URL`},
	} {
		if _, err := web.NewSearcher(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v; want %q", c.o, err, c.want)
		}
	}
}
