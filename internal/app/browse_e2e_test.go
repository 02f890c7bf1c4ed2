package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/browse"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// An agent with browse in its tools, on a file with a browser: section
// that allows the test's local site, clicks through the site's two pages
// in Slack: the tool's output ends on page two with its text, and the
// screenshot is shared in the thread as a PNG.
func TestBrowseScreenshotPostedToSlack(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH: the browse test needs it in CI (apt-get install -y chromium)")
		}
		t.Skip("no chromium on PATH: install it (apt-get install -y chromium) to run the browse test")
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>One</title><a id="next" href="/two">Next page</a>`)
		case "/two":
			fmt.Fprint(w, `<!doctype html><title>Two</title><p id="answer">The answer is 42.</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	script := fmt.Sprintf(`turns:
  - after_tool: browse
    text: "Here is page two."
  - when_last_user_contains: "look at the site"
    tool_calls:
      - name: browse
        input: {url: %q, actions: [{kind: click, selector: "#next"}, {kind: screenshot}]}
fallback:
  text: "browser here."
`, site.URL+"/")
	cfg := agentsConfig(t, map[string]string{"surfer": script},
		"  - name: surfer\n    model: {{surfer}}\n    tools: [browse]\n    answers: {default: true}\n",
		fmt.Sprintf("browser: {}\nweb:\n  allow_hosts: [%q]\n", strings.TrimPrefix(site.URL, "http://")))
	// One store: what this shows (the tool wired in, its screenshot
	// posted) does not depend on it, and a browser is slow to start.
	e := startSlack(t, sqliteDatabase(t), envOptions{config: cfg})
	const ch, ts = "C0BROWSE", "1700009500.000001"
	e.mustPost(newEvent("EvBrowse1", mention(ch, ts, "", alice, "please look at the site")))
	e.waitReply(ch, "Here is page two.")
	e.waitIdle()

	results := e.entries(e.conversation(ch, ts).ID, store.EntryToolResult)
	if len(results) != 1 {
		t.Fatalf("%d tool results, want browse's", len(results))
	}
	res := decode[core.ToolResultContent](t, results[0])
	var out browse.Out
	if err := json.Unmarshal(res.Output, &out); err != nil || res.IsError {
		t.Fatalf("browse's result %s (error %v, %v); want its output", res.Output, res.IsError, err)
	}
	if out.URL != site.URL+"/two" || !strings.Contains(out.Text, "The answer is 42.") {
		t.Errorf("browse ended on %q with %q; want page two and its text", out.URL, out.Text)
	}
	var shared []slacktest.File
	for _, f := range e.slack.Files() {
		if f.Channel != "" {
			shared = append(shared, f)
		}
	}
	if len(shared) != 1 || shared[0].Channel != ch || shared[0].ThreadTS != ts || !bytes.HasPrefix(shared[0].Data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("files shared: %+v; want the screenshot, a PNG, in the thread", shared)
	}
}
