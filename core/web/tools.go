package web

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboardhq/switchboard/core/tool"
)

// The web tools' names.
const (
	ToolFetch  = "web_fetch"
	ToolSearch = "web_search"
)

// FetchIn is web_fetch's input.
type FetchIn struct {
	URL string `json:"url" jsonschema:"the http or https URL of the page to read"`
}

// SearchIn is web_search's input.
type SearchIn struct {
	Query string `json:"query" jsonschema:"what to search the web for, as you would type it into a search engine"`
	Count int    `json:"count,omitempty" jsonschema:"how many results at most (default 5, at most 10)"`
}

// SearchOut is what web_search returns.
type SearchOut struct {
	Results []Result `json:"results"`
}

// fetchOutputBytes bounds web_fetch's output above DefaultMaxText, so a
// page at the text limit still fits once encoded as JSON.
const fetchOutputBytes = 256 << 10

// RegisterFetch registers web_fetch, reading pages through f. It is
// opt-in: only agents whose tools list names it are offered it.
func RegisterFetch(r *tool.Registry, f *Fetcher) error {
	err := tool.Register(r, tool.Def{
		Name: ToolFetch,
		Description: "Read a web page: returns its text (HTML as Markdown, with links), its title and where it ended up after " +
			"redirects. Only public http and https addresses; long pages are cut (truncated is then true).",
		Risk:           tool.RiskLow,
		ReadOnly:       true,
		OptIn:          true,
		MaxOutputBytes: max(fetchOutputBytes, 2*f.o.MaxText),
		SchemaFunc: func(s *jsonschema.Schema) error {
			if p := s.Properties["url"]; p != nil {
				p.Pattern = `^[hH][tT][tT][pP][sS]?://`
			}
			return nil
		},
	}, func(ctx context.Context, _ *tool.Request, in FetchIn) (*Page, error) {
		return f.Fetch(ctx, in.URL)
	})
	if err != nil {
		return fmt.Errorf("registering %s: %w", ToolFetch, err)
	}
	return nil
}

// RegisterSearch registers web_search, searching through s. It is opt-in
// like web_fetch.
func RegisterSearch(r *tool.Registry, s Searcher) error {
	err := tool.Register(r, tool.Def{
		Name: ToolSearch,
		Description: "Search the web: returns results (title, URL, snippet), best first. Read a result's page with " +
			"web_fetch when the snippet is not enough.",
		Risk:     tool.RiskLow,
		ReadOnly: true,
		OptIn:    true,
		SchemaFunc: func(sc *jsonschema.Schema) error {
			if p := sc.Properties["count"]; p != nil {
				p.Minimum, p.Maximum = new(1.0), new(10.0)
			}
			if p := sc.Properties["query"]; p != nil {
				p.MinLength = new(1)
			}
			return nil
		},
	}, func(ctx context.Context, _ *tool.Request, in SearchIn) (SearchOut, error) {
		n := in.Count
		if n == 0 {
			n = 5
		}
		results, err := s.Search(ctx, in.Query, min(n, 10))
		if err != nil {
			return SearchOut{}, err
		}
		if results == nil {
			results = []Result{}
		}
		return SearchOut{Results: results}, nil
	})
	if err != nil {
		return fmt.Errorf("registering %s: %w", ToolSearch, err)
	}
	return nil
}
