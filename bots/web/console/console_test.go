package console_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bots/web/console"
)

// TestRoutes: the page answers at / and /login with headers that keep a
// sign-in link's secret from leaking (no referrer) and run only the page's
// own scripts; every file the page and its views import is served.
func TestRoutes(t *testing.T) {
	mux := http.NewServeMux()
	console.Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{"/", "/?c=123", "/login?t=secret"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<script type="module" src="/console/app.js">`) {
			t.Fatalf("GET %s = %d; want the page", path, resp.StatusCode)
		}
		h := resp.Header
		if h.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") ||
			h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s headers %v; want no referrer, a CSP of the page's own scripts, no-store and nosniff", path, h)
		}
	}
	if resp, _ := get("/elsewhere"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /elsewhere = %d; want 404 (the page is at / only)", resp.StatusCode)
	}
	// Every module a file imports exists, so no view fails to load.
	importRE := regexp.MustCompile(`(?m)^import .* from "(\.\.?/[^"]+)";`)
	files := console.Files()
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		resp, body := get("/console/" + path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /console/%s = %d; want 200", path, resp.StatusCode)
		}
		if strings.HasSuffix(path, ".js") && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
			t.Errorf("/console/%s is served as %q; a module needs text/javascript", path, resp.Header.Get("Content-Type"))
		}
		for _, m := range importRE.FindAllStringSubmatch(body, -1) {
			dir := path[:strings.LastIndex(path, "/")+1]
			target := dir + m[1]
			target = strings.ReplaceAll(target, "views/../", "")
			target = strings.TrimPrefix(target, "./")
			target = strings.ReplaceAll(target, "/./", "/")
			if _, err := fs.Stat(files, target); err != nil {
				t.Errorf("%s imports %s, which is not embedded (%v)", path, m[1], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
