package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/web"
)

// fakeResolver answers from a table and never asks real DNS. A host with
// several answers gets them in turn (the last one repeats): a DNS answer
// that changes between lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newResolver(answers map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for host, addrs := range answers {
		r.add(host, addrs...)
	}
	return r
}

// add appends one answer (a set of addresses) for host.
func (r *fakeResolver) add(host string, addrs ...string) {
	var answer []netip.Addr
	for _, a := range addrs {
		answer = append(answer, netip.MustParseAddr(a))
	}
	r.answers[host] = append(r.answers[host], answer)
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.answers[host]
	if len(list) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := r.calls[host]
	r.calls[host]++
	return list[min(i, len(list)-1)], nil
}

func (r *fakeResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// recordingDialer records every address it is asked to dial. It dials
// only loopback addresses and the routes it is given (an address standing
// for a public host → a local server's address); asked for anything else,
// it fails the test and dials nothing.
type recordingDialer struct {
	t      *testing.T
	mu     sync.Mutex
	dialed []string
	routes map[string]string
	// forbid fails the test on any dial at all.
	forbid bool
}

func (d *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	to, routed := d.routes[addr]
	d.mu.Unlock()
	if d.forbid {
		d.t.Errorf("the guard asked to dial %s; it should have refused before dialling", addr)
		return nil, errors.New("test dialer: no dialling in this test")
	}
	if !routed {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().IsLoopback() {
			d.t.Errorf("the guard asked to dial %s, which is neither loopback nor routed to a local server", addr)
			return nil, errors.New("test dialer: not a local address")
		}
		to = addr
	}
	return (&net.Dialer{}).DialContext(ctx, network, to)
}

func (d *recordingDialer) calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}

func newFetcher(t *testing.T, g web.GuardOptions, f web.FetchOptions) *web.Fetcher {
	t.Helper()
	guard, err := web.NewGuard(g)
	if err != nil {
		t.Fatal(err)
	}
	f.Guard = guard
	fetcher, err := web.NewFetcher(f)
	if err != nil {
		t.Fatal(err)
	}
	return fetcher
}

func hostOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestFetchRefusesInternalAddresses: every address inside the service's
// own network is refused before anything is dialled, whether the URL
// names it or a name resolves to it. The dialer fails the test if it is
// asked for anything, so no address here is ever contacted.
func TestFetchRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	// A local server that must never be reached: its port is in the
	// loopback URLs below, and it counts requests.
	var hits sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.Path, true)
		_, _ = w.Write([]byte("secret"))
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	res := newResolver(map[string][]string{
		"loopback.test":            {"127.0.0.1"},
		"loopback6.test":           {"::1"},
		"metadata.google.internal": {"169.254.169.254"},
		"intranet.test":            {"10.20.30.40"},
		"mixed.test":               {"203.0.113.7", "192.168.1.1"},
		"mapped.test":              {"::ffff:127.0.0.1"},
		"ula.test":                 {"fd00:ec2::254"},
	})
	cases := []struct {
		url, reason string
	}{
		{fmt.Sprintf("http://127.0.0.1:%d/a", port), "loopback"},
		{fmt.Sprintf("http://[::1]:%d/b", port), "loopback"},
		{fmt.Sprintf("http://localhost.:%d/c", port), "no such host"}, // names go to the fake resolver only
		{fmt.Sprintf("http://loopback.test:%d/d", port), "loopback"},
		{fmt.Sprintf("http://loopback6.test:%d/e", port), "loopback"},
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://metadata.google.internal/computeMetadata/v1/", "link-local"},
		{"http://10.0.0.1/", "private"},
		{"http://intranet.test/", "private"},
		{"http://172.16.5.4/", "private"},
		{"http://192.168.0.1/", "private"},
		{"http://100.64.0.1/", "carrier-grade NAT"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://0.1.2.3/", "this network"},
		{"http://[fe80::1]/", "link-local"},
		{"http://[fd00::1]/", "private"},
		{"http://ula.test/", "private"},
		{"http://224.0.0.1/", "multicast"},
		{"http://255.255.255.255/", "reserved"},
		{"http://[::ffff:127.0.0.1]/", "loopback"},
		{"http://mapped.test/", "loopback"},
		{"http://[::ffff:169.254.169.254]/", "link-local"},
		{"http://[64:ff9b::a9fe:a9fe]/", "link-local"}, // NAT64 of the metadata address
		{"http://[2002:7f00:1::]/", "loopback"},        // 6to4 of 127.0.0.1
		{"http://mixed.test/", "private"},              // one bad answer refuses the host
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			t.Parallel()
			dialer := &recordingDialer{t: t, forbid: true}
			f := newFetcher(t, web.GuardOptions{Resolver: res, Dialer: dialer}, web.FetchOptions{Timeout: 5 * time.Second})
			page, err := f.Fetch(context.Background(), c.url)
			if err == nil {
				t.Fatalf("fetched %s (%q); want it refused", c.url, page.Text)
			}
			if !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("error %q; want it to say %q", err, c.reason)
			}
			if c.reason != "no such host" {
				var refused *web.RefusedError
				if !errors.As(err, &refused) {
					t.Fatalf("error %v (%T); want a *web.RefusedError", err, err)
				}
				if refused.Host == "" || !refused.Addr.IsValid() {
					t.Fatalf("refusal %+v does not name the host and address", refused)
				}
			}
		})
	}
	t.Cleanup(func() {
		hits.Range(func(k, _ any) bool {
			t.Errorf("the local server was reached at %v", k)
			return true
		})
	})
}

// TestFetchAllowedLocalPage: a local server named in allow_hosts is read,
// its HTML as Markdown with its title and absolute links, its scripts
// left out.
func TestFetchAllowedLocalPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html><head><title>Harbour  opening hours</title>
<script>var token = "do-not-show";</script><style>body{color:red}</style></head>
<body><h1>Opening hours</h1><p>The harbour office opens at <strong>8:30</strong> on weekdays.</p>
<ul><li>Monday to Friday</li><li>Closed on Sundays</li></ul>
<p>See the <a href="/tides">tide table</a>.</p></body></html>`))
	}))
	t.Cleanup(srv.Close)
	f := newFetcher(t, web.GuardOptions{Allow: []string{hostOf(t, srv.URL)}, Resolver: newResolver(nil), Dialer: &recordingDialer{t: t}}, web.FetchOptions{})
	page, err := f.Fetch(context.Background(), srv.URL+"/hours")
	if err != nil {
		t.Fatal(err)
	}
	if page.Title != "Harbour opening hours" || page.ContentType != "text/html" || page.URL != srv.URL+"/hours" || page.Truncated {
		t.Fatalf("page = %+v; want the title, text/html, the URL, whole", page)
	}
	for _, want := range []string{"# Opening hours", "**8:30**", "- Monday to Friday", "[tide table](" + srv.URL + "/tides)"} {
		if !strings.Contains(page.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, page.Text)
		}
	}
	for _, unwanted := range []string{"do-not-show", "color:red"} {
		if strings.Contains(page.Text, unwanted) {
			t.Errorf("text holds %q from a script or style:\n%s", unwanted, page.Text)
		}
	}
}

// TestAllowHostsPort: an allow entry with a port allows that port only;
// one without, every port of the host.
func TestAllowHostsPort(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("hello"))
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	res := newResolver(map[string][]string{"intranet.test": {"127.0.0.1"}})
	cases := []struct {
		allow []string
		url   string
		ok    bool
	}{
		{[]string{fmt.Sprintf("127.0.0.1:%d", port)}, srv.URL, true},
		{[]string{fmt.Sprintf("127.0.0.1:%d", port+1)}, srv.URL, false},
		{[]string{"127.0.0.1"}, srv.URL, true},
		{[]string{fmt.Sprintf("intranet.test:%d", port)}, fmt.Sprintf("http://intranet.test:%d/", port), true},
		{[]string{"INTRANET.test."}, fmt.Sprintf("http://intranet.test:%d/", port), true},
		{[]string{"other.test"}, fmt.Sprintf("http://intranet.test:%d/", port), false},
		// An allowed address allows a name that resolves to it: the
		// address could be asked for directly anyway.
		{[]string{fmt.Sprintf("127.0.0.1:%d", port)}, fmt.Sprintf("http://intranet.test:%d/", port), true},
	}
	for _, c := range cases {
		dialer := &recordingDialer{t: t}
		f := newFetcher(t, web.GuardOptions{Allow: c.allow, Resolver: res, Dialer: dialer}, web.FetchOptions{})
		page, err := f.Fetch(context.Background(), c.url)
		if c.ok && (err != nil || page.Text != "hello") {
			t.Errorf("allow %v, %s: %v; want the page", c.allow, c.url, err)
		}
		var refused *web.RefusedError
		if !c.ok && !errors.As(err, &refused) {
			t.Errorf("allow %v, %s: err %v; want refused", c.allow, c.url, err)
		}
		if !c.ok && len(dialer.calls()) != 0 {
			t.Errorf("allow %v, %s: dialled %v before refusing", c.allow, c.url, dialer.calls())
		}
	}
}

// TestFetchRedirects: a redirect from an allowed local server to a
// loopback port that is not allowed is refused at its dial, and the
// second server is never reached; so is a redirect to a name resolving
// to loopback, to another scheme, and a chain past the limit.
func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	reached := make(chan string, 10)
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.URL.Path
		_, _ = w.Write([]byte("internal admin page"))
	}))
	t.Cleanup(inner.Close)
	innerPort := inner.Listener.Addr().(*net.TCPAddr).Port
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, inner.URL+"/admin", http.StatusFound)
		case "/to-name":
			http.Redirect(w, r, fmt.Sprintf("http://sneaky.test:%d/admin", innerPort), http.StatusMovedPermanently)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/ok":
			http.Redirect(w, r, "/final", http.StatusSeeOther)
		case "/final":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("landed"))
		}
	}))
	t.Cleanup(outer.Close)
	res := newResolver(map[string][]string{"sneaky.test": {"127.0.0.1"}})
	dialer := &recordingDialer{t: t}
	f := newFetcher(t, web.GuardOptions{Allow: []string{hostOf(t, outer.URL)}, Resolver: res, Dialer: dialer}, web.FetchOptions{})

	page, err := f.Fetch(context.Background(), outer.URL+"/ok")
	if err != nil || page.Text != "landed" || page.URL != outer.URL+"/final" {
		t.Fatalf("a redirect within the allowed server: %+v, %v; want the final page and its URL", page, err)
	}
	for path, want := range map[string]string{
		"/to-loopback": "loopback",
		"/to-name":     "sneaky.test",
		"/to-file":     `scheme "file"`,
		"/loop":        "stopped after 5 redirects",
	} {
		_, err := f.Fetch(context.Background(), outer.URL+path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v; want it refused, saying %q", path, err, want)
		}
	}
	var refused *web.RefusedError
	if _, err := f.Fetch(context.Background(), outer.URL+"/to-loopback"); !errors.As(err, &refused) || refused.Addr.String() != "127.0.0.1" {
		t.Errorf("redirect to loopback: %v; want a *web.RefusedError for 127.0.0.1", err)
	}
	select {
	case p := <-reached:
		t.Fatalf("the server behind the redirect was reached at %s", p)
	default:
	}
	for _, d := range dialer.calls() {
		if d != hostOf(t, outer.URL) {
			t.Errorf("dialled %s; only the allowed server %s should be", d, hostOf(t, outer.URL))
		}
	}
}

// TestFetchDNSRebinding: a name that first resolves to a public address
// and then to loopback. The guard dials the address it checked, never the
// name (so the connection cannot go where a second answer points), and
// checks again for each new connection: the second fetch, on a new
// connection, sees loopback and is refused.
func TestFetchDNSRebinding(t *testing.T) {
	t.Parallel()
	// The local server stands in for the public host: the dialer routes
	// 203.0.113.7:80 (a documentation address, never dialled) to it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Connection", "close") // each fetch dials anew
		_, _ = w.Write([]byte("public page"))
	}))
	t.Cleanup(srv.Close)
	res := newResolver(nil)
	res.add("rebind.test", "203.0.113.7")
	res.add("rebind.test", "127.0.0.1")
	dialer := &recordingDialer{t: t, routes: map[string]string{"203.0.113.7:80": hostOf(t, srv.URL)}}
	f := newFetcher(t, web.GuardOptions{Resolver: res, Dialer: dialer}, web.FetchOptions{})

	page, err := f.Fetch(context.Background(), "http://rebind.test/")
	if err != nil || page.Text != "public page" {
		t.Fatalf("first fetch: %+v, %v; want the page through the public address", page, err)
	}
	if got := dialer.calls(); len(got) != 1 || got[0] != "203.0.113.7:80" {
		t.Fatalf("dialled %v; want exactly the checked address 203.0.113.7:80, not the name", got)
	}
	if n := res.lookups("rebind.test"); n != 1 {
		t.Fatalf("%d lookups for one connection; want 1 (the answer checked is the one dialled)", n)
	}

	_, err = f.Fetch(context.Background(), "http://rebind.test/")
	var refused *web.RefusedError
	if !errors.As(err, &refused) || refused.Host != "rebind.test" || refused.Addr.String() != "127.0.0.1" {
		t.Fatalf("second fetch after the answer changed: %v; want refused for rebind.test → 127.0.0.1", err)
	}
	if got := dialer.calls(); len(got) != 1 {
		t.Fatalf("dialled %v; the second answer must not be dialled", got)
	}
}

func TestGuardOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "http://intranet/", "10.0.0.0/8", "host:0", "host:99999", "user@host"} {
		_, err := web.NewGuard(web.GuardOptions{Allow: []string{"ok.test", bad}})
		if err == nil || !strings.Contains(err.Error(), "Allow[1]") {
			t.Errorf("allow %q: err %v; want an error naming Allow[1]", bad, err)
		}
	}
	for _, good := range []string{"intranet", "intranet:8080", "10.1.2.3", "[::1]:8088", "::1", "127.0.0.1:8088"} {
		if _, err := web.NewGuard(web.GuardOptions{Allow: []string{good}}); err != nil {
			t.Errorf("allow %q: %v; want it accepted", good, err)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"203.0.113.7":       "",
		"2001:db8::1":       "",
		"8.8.8.8":           "",
		"127.0.0.53":        "loopback",
		"::1":               "loopback",
		"::":                "unspecified",
		"169.254.169.254":   "link-local",
		"fe80::1%eth0":      "zoned",
		"198.18.0.1":        "benchmarking",
		"::ffff:10.0.0.1":   "private",
		"64:ff9b::7f00:1":   "loopback",
		"64:ff9b::808:808":  "",
		"2002:a00:1::1":     "private",
		"fec0::1":           "site-local",
		"::127.0.0.1":       "IPv4-compatible",
		"ff02::1":           "multicast",
		"100.100.100.200":   "carrier-grade NAT", // Alibaba Cloud's metadata
		"192.0.0.170":       "IETF",
		"172.31.255.255":    "private",
		"172.32.0.1":        "",
		"fd00:ec2::254":     "private", // AWS's IPv6 metadata
		"::ffff:8.8.8.8":    "",
		"100.63.255.255":    "",
		"100.128.0.0":       "",
		"240.0.0.1":         "reserved",
		"2002:c000:0204::1": "",
	} {
		got := web.CheckAddr(netip.MustParseAddr(addr))
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("CheckAddr(%s) = %q; want %q", addr, got, want)
		}
	}
}

// TestGuardDialContext: the guard used on its own, as a proxy would: a
// name's checked addresses are dialled in turn until one answers, and
// anything but TCP is refused.
func TestGuardDialContext(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hi"))
			_ = c.Close()
		}
	}()
	res := newResolver(map[string][]string{"two.test": {"203.0.113.7", "203.0.113.8"}})
	// The first address is routed to a closed port, the second to the
	// listener: neither documentation address is dialled itself.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	_ = closed.Close()
	dialer := &recordingDialer{t: t, routes: map[string]string{"203.0.113.7:443": closedAddr, "203.0.113.8:443": ln.Addr().String()}}
	g, err := web.NewGuard(web.GuardOptions{Resolver: res, Dialer: dialer})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := g.DialContext(context.Background(), "tcp", "two.test:443")
	if err != nil {
		t.Fatalf("dialling two.test: %v; want the second address after the first failed", err)
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "hi" {
		t.Fatalf("read %q, %v; want the listener's greeting", buf, err)
	}
	_ = conn.Close()
	if got := dialer.calls(); len(got) != 2 || got[0] != "203.0.113.7:443" || got[1] != "203.0.113.8:443" {
		t.Fatalf("dialled %v; want both checked addresses, in the resolver's order", got)
	}
	if _, err := g.DialContext(context.Background(), "udp", "two.test:53"); err == nil || !strings.Contains(err.Error(), `network "udp"`) {
		t.Fatalf("udp: %v; want it refused", err)
	}
	if len(dialer.calls()) != 2 {
		t.Fatalf("dialled %v for udp", dialer.calls()[2:])
	}
}
