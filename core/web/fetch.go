package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Defaults of FetchOptions.
const (
	DefaultMaxBytes     = 4 << 20 // 4 MiB read from the wire
	DefaultMaxText      = 64 << 10
	DefaultTimeout      = 20 * time.Second
	DefaultMaxRedirects = 5
	DefaultUserAgent    = "Switchboard-web_fetch/1"
)

// FetchOptions configure a Fetcher.
type FetchOptions struct {
	// Guard dials every connection; required (it is what keeps fetches
	// off the service's own network).
	Guard *Guard
	// MaxBytes bounds the body read from the server; the rest is not read
	// and the page is marked truncated (default DefaultMaxBytes).
	MaxBytes int64
	// MaxText bounds the text returned, in bytes, cut at a character
	// boundary (default DefaultMaxText).
	MaxText int
	// Timeout bounds a whole fetch, redirects and body included (default
	// DefaultTimeout).
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed (default
	// DefaultMaxRedirects; negative: none).
	MaxRedirects int
	// UserAgent is sent with each request (default DefaultUserAgent).
	UserAgent string
	// Logger (default: discard).
	Logger *slog.Logger
}

func (o *FetchOptions) validate() error {
	switch {
	case o.Guard == nil:
		return errors.New("FetchOptions.Guard is required")
	case o.MaxBytes < 0:
		return fmt.Errorf("FetchOptions.MaxBytes %d must not be negative", o.MaxBytes)
	case o.MaxText < 0:
		return fmt.Errorf("FetchOptions.MaxText %d must not be negative", o.MaxText)
	case o.Timeout < 0:
		return fmt.Errorf("FetchOptions.Timeout %s must not be negative", o.Timeout)
	}
	return nil
}

func (o *FetchOptions) defaults() {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxText == 0 {
		o.MaxText = DefaultMaxText
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Fetcher reads web pages as text through a Guard. It is safe for
// concurrent use.
type Fetcher struct {
	o      FetchOptions
	client *http.Client
}

// NewFetcher builds a Fetcher.
func NewFetcher(o FetchOptions) (*Fetcher, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("web fetcher: %w", err)
	}
	o.defaults()
	return &Fetcher{o: o, client: NewClient(o.Guard, o.Timeout, o.MaxRedirects)}, nil
}

// NewClient is an HTTP client whose every connection goes through g: no
// proxy from the environment (a proxy would dial for it), at most
// maxRedirects redirects (negative: none), each to http or https only,
// and the whole exchange bounded by timeout (0: none).
func NewClient(g *Guard, timeout time.Duration, maxRedirects int) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", max(maxRedirects, 0))
			}
			if err := checkScheme(req.URL); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
			}
			return nil
		},
	}
}

func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: only http and https are fetched", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("the URL has no host")
	}
	return nil
}

// Page is a fetched page.
type Page struct {
	// URL is where the page was read, after redirects.
	URL string `json:"url"`
	// Title is an HTML page's title.
	Title string `json:"title,omitempty"`
	// ContentType is the media type the server declared (or, without one,
	// the one sniffed).
	ContentType string `json:"content_type"`
	// Text is the page: Markdown for HTML, as it came for text.
	Text string `json:"text"`
	// Truncated is set when the page was longer than the limits and Text
	// is its beginning.
	Truncated bool `json:"truncated,omitempty"`
}

// Fetch reads rawURL and returns it as text: HTML as Markdown; plain
// text, Markdown, JSON and XML as they are. Other content types, error
// statuses and addresses the Guard refuses are errors.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", rawURL, err)
	}
	if err := checkScheme(u); err != nil {
		return nil, fmt.Errorf("url %q: %w", u.Redacted(), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", f.o.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.Redacted()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("fetching %s: the server answered %s", final, resp.Status)
	}

	// A declared type is judged before the body is read: an image is
	// refused without downloading it.
	declared := resp.Header.Get("Content-Type")
	var media mediaType
	if declared != "" {
		if media, err = parseMediaType(final, declared); err != nil {
			return nil, err
		}
	}
	body, truncated, err := readCapped(resp.Body, f.o.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", final, err)
	}
	if declared == "" {
		if media, err = parseMediaType(final, http.DetectContentType(body)); err != nil {
			return nil, err
		}
	}
	body, err = toUTF8(body, media)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", final, err)
	}
	p := &Page{URL: final, ContentType: media.name, Truncated: truncated}
	if media.kind == kindHTML {
		p.Title, p.Text, err = htmlToMarkdown(ctx, body, resp.Request.URL)
		if err != nil {
			return nil, fmt.Errorf("converting %s to Markdown: %w", final, err)
		}
	} else {
		p.Text = strings.ToValidUTF8(string(body), "\uFFFD")
	}
	if len(p.Text) > f.o.MaxText {
		p.Text, p.Truncated = cutUTF8(p.Text, f.o.MaxText), true
	}
	f.o.Logger.DebugContext(ctx, "web page fetched", "url", final, "content_type", media.name, "bytes", len(body), "truncated", p.Truncated)
	return p, nil
}

// readCapped reads at most limit bytes of r and reports whether there was
// more.
func readCapped(r io.Reader, limit int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > limit {
		return b[:limit], true, nil
	}
	return b, false, nil
}

type kind int

const (
	kindNone kind = iota
	kindHTML
	kindText
)

// mediaType is a Content-Type as far as a fetch cares.
type mediaType struct {
	name    string // text/html
	charset string // the charset parameter, if any
	kind    kind
}

// parseMediaType reads a Content-Type, and refuses one that is not text.
func parseMediaType(where, contentType string) (mediaType, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return mediaType{}, fmt.Errorf("fetching %s: content type %q: %w", where, contentType, err)
	}
	m := mediaType{name: mt, charset: params["charset"], kind: textKind(mt)}
	if m.kind == kindNone {
		return mediaType{}, fmt.Errorf("fetching %s: content type %s is not text; web_fetch reads HTML, plain text, Markdown, JSON and XML", where, mt)
	}
	return m, nil
}

// textKind is how a media type is read.
func textKind(mt string) kind {
	switch mt {
	case "text/html", "application/xhtml+xml":
		return kindHTML
	case "text/plain", "text/markdown", "text/x-markdown", "text/csv", "text/xml",
		"application/json", "application/xml", "application/ld+json":
		return kindText
	}
	// Structured text (application/problem+json, application/atom+xml),
	// but not an image that happens to be XML (image/svg+xml).
	if !strings.HasPrefix(mt, "image/") && (strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")) {
		return kindText
	}
	return kindNone
}

// toUTF8 decodes body from its declared charset (HTML: also its meta
// tags) into UTF-8.
func toUTF8(body []byte, m mediaType) ([]byte, error) {
	if m.charset == "" && m.kind != kindHTML {
		return body, nil
	}
	ct := m.name
	if m.charset != "" {
		ct += "; charset=" + m.charset
	}
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		return nil, fmt.Errorf("charset %q: %w", m.charset, err)
	}
	return io.ReadAll(r)
}

// htmlToMarkdown is the page's title and its body as Markdown, links made
// absolute against pageURL.
func htmlToMarkdown(ctx context.Context, body []byte, pageURL *url.URL) (string, string, error) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	title := strings.Join(strings.Fields(findTitle(doc)), " ")
	conv := htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin()))
	md, err := conv.ConvertNode(doc, htmltomarkdown.WithContext(ctx), htmltomarkdown.WithDomain(pageURL.String()))
	if err != nil {
		return "", "", err
	}
	return title, string(md), nil
}

func findTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.Data == "title" {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return b.String()
	}
	if n.Type == html.ElementNode && n.Data == "body" {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c); t != "" {
			return t
		}
	}
	return ""
}

// cutUTF8 is s cut to at most n bytes, at a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
