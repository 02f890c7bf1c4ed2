package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// TestWebFetchEndToEnd, on both stores, through the real app on the fake
// Anthropic: atlas, whose tools list names web_fetch, is offered it and
// calls it on a local page (allowed by web.allow_hosts); the page's text
// reaches the model's next request, a call to a loopback port the file
// does not allow comes back as a refusal, and both calls are audited.
// bea, with no tools list, is offered the other tools but not web_fetch.
func TestWebFetchEndToEnd(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>Tides</title></head><body><h1>Harbour tides</h1><p>High tide at <b>14:02</b>.</p></body></html>`))
	}))
	t.Cleanup(page.Close)
	allowed := strings.TrimPrefix(page.URL, "http://")
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		config := fmt.Sprintf(`agents:
  - name: atlas
    answers: {default: true}
    tools: [web_fetch, remember]
  - name: bea
    answers: {channels: [C0BEA]}
web:
  allow_hosts: [%q]
`, allowed) + openAccess
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake), config: config})

		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{
				{ID: "toolu_page", Name: "web_fetch", Input: fmt.Sprintf(`{"url": %q}`, page.URL+"/tides")},
				{ID: "toolu_inner", Name: "web_fetch", Input: `{"url": "http://127.0.0.1:1/admin"}`},
			}},
			modeltest.Reply{Text: "High tide is at 14:02."},
		)
		e.mustPost(newEvent("EvWeb1", mention("C0WEB", "1700004000.000001", "", alice, "when is high tide today?")))
		e.waitReply("C0WEB", "High tide is at 14:02.")
		e.waitIdle()
		reqs := fake.Requests()
		if len(reqs) != 2 {
			t.Fatalf("the fake model got %d requests; want 2", len(reqs))
		}
		if tools := toolNames(reqs[0].JSON()); !strings.Contains(tools, "web_fetch") {
			t.Fatalf("atlas was offered %s; want web_fetch, which its tools list names", tools)
		}
		if r := toolResult(t, reqs[1].JSON(), "toolu_page"); r.isError || !strings.Contains(r.text, `High tide at **14:02**.`) || !strings.Contains(r.text, `Tides`) {
			t.Fatalf("web_fetch's result = %+v; want the page's title and text as Markdown", r)
		}
		if r := toolResult(t, reqs[1].JSON(), "toolu_inner"); !r.isError || !strings.Contains(r.text, "loopback") {
			t.Fatalf("web_fetch of a loopback port not in allow_hosts = %+v; want an error result saying it is loopback", r)
		}
		audit, err := e.store.AuditList(context.Background(), &store.AuditListParams{Action: "web_fetch"})
		if err != nil || len(audit) != 2 {
			t.Fatalf("audit rows for web_fetch = %d, %v; want 2", len(audit), err)
		}
		for _, row := range audit {
			if row.Risk != "low" || row.Agent != "atlas" {
				t.Errorf("audit row %+v; want atlas's low-risk call", row)
			}
		}

		fake.Push(modeltest.Reply{Text: "bea here."})
		e.mustPost(newEvent("EvWeb2", mention("C0BEA", "1700004000.000002", "", alice, "can you read the tide page for me?")))
		e.waitReply("C0BEA", "bea here.")
		e.waitIdle()
		reqs = fake.Requests()
		if len(reqs) != 3 {
			t.Fatalf("the fake model got %d requests; want 3", len(reqs))
		}
		if tools := toolNames(reqs[2].JSON()); strings.Contains(tools, "web_fetch") || !strings.Contains(tools, "remember") {
			t.Fatalf("bea, with no tools list, was offered %s; want the other tools (remember) but not the opt-in web_fetch", tools)
		}
	})
}
