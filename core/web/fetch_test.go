package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/core/web"
)

// local is a local server serving body with contentType ("" sends none),
// and a fetcher allowed to reach it.
func local(t *testing.T, contentType, body string, o web.FetchOptions) (*httptest.Server, *web.Fetcher) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing by the server
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	// No name is looked up for real and nothing but loopback is dialled.
	g := web.GuardOptions{Allow: []string{hostOf(t, srv.URL)}, Resolver: newResolver(nil), Dialer: &recordingDialer{t: t}}
	return srv, newFetcher(t, g, o)
}

// TestFetchContentTypes: text comes back as it is, HTML as Markdown, and
// anything else is refused with a message that says what is read.
func TestFetchContentTypes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		contentType, body string
		want              string // in the text; "" when refused
		refused           string // in the error
	}{
		{"text/plain; charset=utf-8", "plain words", "plain words", ""},
		{"text/markdown", "# Title\n\n- item", "# Title\n\n- item", ""},
		{"application/json", `{"tide": "high"}`, `{"tide": "high"}`, ""},
		{"application/xml", `<tide>high</tide>`, `<tide>high</tide>`, ""},
		{"application/problem+json", `{"title": "gone"}`, `{"title": "gone"}`, ""},
		{"text/plain; charset=iso-8859-1", "caf\xe9", "café", ""},
		{"text/html; charset=windows-1252", "<p>na\xefve</p>", "naïve", ""},
		{"", "<html><body><p>sniffed <em>html</em></p></body></html>", "sniffed *html*", ""},
		{"image/png", "\x89PNG\r\n\x1a\n", "", "content type image/png is not text"},
		{"application/octet-stream", "\x00\x01", "", "content type application/octet-stream is not text"},
		{"application/pdf", "%PDF-1.7", "", "content type application/pdf is not text"},
		{"image/svg+xml", "<svg/>", "", "content type image/svg+xml is not text"},
		{"", "\x00\x01\x02binary", "", "content type application/octet-stream is not text"},
	}
	for _, c := range cases {
		srv, f := local(t, c.contentType, c.body, web.FetchOptions{})
		page, err := f.Fetch(context.Background(), srv.URL)
		switch {
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%q: err %v; want it refused saying %q", c.contentType, err, c.refused)
		case c.refused == "" && err != nil:
			t.Errorf("%q: %v; want the text", c.contentType, err)
		case c.refused == "" && !strings.Contains(page.Text, c.want):
			t.Errorf("%q: text %q; want it to hold %q", c.contentType, page.Text, c.want)
		}
	}
}

// TestFetchSizeCaps: a body past MaxBytes is read no further and marked
// truncated; so is text past MaxText, cut at a character boundary.
func TestFetchSizeCaps(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 1000)
	srv, f := local(t, "text/plain", body, web.FetchOptions{MaxBytes: 1000})
	page, err := f.Fetch(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !page.Truncated || page.Text != body[:1000] {
		t.Fatalf("truncated=%v, %d bytes; want the first 1000 bytes, marked truncated", page.Truncated, len(page.Text))
	}

	srv, f = local(t, "text/plain; charset=utf-8", strings.Repeat("é", 100), web.FetchOptions{MaxText: 51})
	page, err = f.Fetch(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !page.Truncated || page.Text != strings.Repeat("é", 25) || !utf8.ValidString(page.Text) {
		t.Fatalf("truncated=%v, text %q; want 25 whole characters (50 bytes), marked truncated", page.Truncated, page.Text)
	}

	srv, f = local(t, "text/plain", "short", web.FetchOptions{MaxBytes: 5})
	if page, err = f.Fetch(context.Background(), srv.URL); err != nil || page.Truncated || page.Text != "short" {
		t.Fatalf("a body of exactly MaxBytes: %+v, %v; want it whole, not truncated", page, err)
	}
}

// TestFetchTimeout: a server that never answers costs the fetch its
// timeout, not more.
func TestFetchTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	f := newFetcher(t, web.GuardOptions{Allow: []string{hostOf(t, srv.URL)}, Resolver: newResolver(nil), Dialer: &recordingDialer{t: t}}, web.FetchOptions{Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := f.Fetch(context.Background(), srv.URL)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err %v; want a timeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the fetch took %s; want about its 200ms timeout", took)
	}
}

// TestFetchErrors: an error status, a URL that is not http(s) and one
// that does not parse are errors naming the problem; nothing is dialled
// for the last two.
func TestFetchErrors(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no such page", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	dialer := &recordingDialer{t: t}
	f := newFetcher(t, web.GuardOptions{Allow: []string{hostOf(t, srv.URL)}, Resolver: newResolver(nil), Dialer: dialer}, web.FetchOptions{})
	if _, err := f.Fetch(context.Background(), srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404 Not Found") {
		t.Errorf("a 404: err %v; want it to say 404 Not Found", err)
	}
	before := len(dialer.calls())
	for raw, want := range map[string]string{
		"file:///etc/passwd":   `scheme "file"`,
		"gopher://example/":    `scheme "gopher"`,
		"http:///no-host":      "no host",
		"http://bad host:80/":  "invalid character",
		"ftp://127.0.0.1/file": `scheme "ftp"`,
	} {
		if _, err := f.Fetch(context.Background(), raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v; want it refused saying %q", raw, err, want)
		}
	}
	if after := len(dialer.calls()); after != before {
		t.Errorf("dialled %v for URLs refused before any connection", dialer.calls()[before:])
	}
	if _, err := web.NewFetcher(web.FetchOptions{}); err == nil || !strings.Contains(err.Error(), "FetchOptions.Guard") {
		t.Errorf("a fetcher without a guard: %v; want an error naming FetchOptions.Guard", err)
	}
}

// TestFetchTool: web_fetch, as the model calls it, is an opt-in,
// read-only, low-risk tool returning the page; a refused address comes
// back as an error result the model reads, not a failed turn.
func TestFetchTool(t *testing.T) {
	t.Parallel()
	srv, f := local(t, "text/html", "<title>Tides</title><p>High tide at <b>14:02</b>.</p>", web.FetchOptions{})
	reg := tool.NewRegistry()
	if err := web.RegisterFetch(reg, f); err != nil {
		t.Fatal(err)
	}
	tl, ok := reg.Get(web.ToolFetch)
	if !ok || !tl.OptIn() || !tl.ReadOnly() || tl.Risk() != tool.RiskLow {
		t.Fatalf("web_fetch registered %v; want an opt-in, read-only, low-risk tool", ok)
	}
	res := tl.Call(context.Background(), nil, json.RawMessage(`{"url": "`+srv.URL+`/tides"}`))
	var page web.Page
	if res.IsError || json.Unmarshal(res.Output, &page) != nil || page.Title != "Tides" || page.Text != "High tide at **14:02**." {
		t.Fatalf("web_fetch = %s (error %v); want the page as Markdown", res.Output, res.IsError)
	}
	res = tl.Call(context.Background(), nil, json.RawMessage(`{"url": "http://[::1]:1/"}`))
	if !res.IsError || !strings.Contains(string(res.Output), "loopback") {
		t.Fatalf("web_fetch of [::1] = %s; want an error result saying it is loopback", res.Output)
	}
	res = tl.Call(context.Background(), nil, json.RawMessage(`{"url": "file:///etc/passwd"}`))
	if !res.IsError || !strings.Contains(string(res.Output), "invalid arguments") {
		t.Fatalf("web_fetch of a file URL = %s; want it refused by the schema", res.Output)
	}
}
