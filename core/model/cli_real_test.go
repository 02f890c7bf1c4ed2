package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// The real CLIs against local fakes of their providers' APIs, to catch a
// new CLI version that changed its flags or events. They need the CLIs
// installed (npm install --prefix DIR @anthropic-ai/claude-code
// @openai/codex) and run only when pointed at them:
//
//	SWITCHBOARD_TEST_CLAUDE_PATH=DIR/node_modules/.bin/claude \
//	SWITCHBOARD_TEST_CODEX_PATH=DIR/node_modules/.bin/codex \
//	go test -run TestRealCLI ./core/model/

// apiFake records request bodies and answers each with answer(n, body).
type apiFake struct {
	mu     sync.Mutex
	bodies []string
}

func (f *apiFake) serve(t *testing.T, path string, answer func(w http.ResponseWriter, n int)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != path {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		f.mu.Lock()
		f.bodies = append(f.bodies, string(body))
		n := len(f.bodies)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		answer(w, n)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *apiFake) body(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		return ""
	}
	return f.bodies[i]
}

func sseEvent(w http.ResponseWriter, typ, data string) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
	w.(http.Flusher).Flush()
}

func realCLIEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, extra...)
}

func TestRealCLIClaudeCode(t *testing.T) {
	path := os.Getenv("SWITCHBOARD_TEST_CLAUDE_PATH")
	if path == "" {
		t.Skip("set SWITCHBOARD_TEST_CLAUDE_PATH to a claude program to run the real CLI")
	}
	var api apiFake
	srv := api.serve(t, "/v1/messages", func(w http.ResponseWriter, n int) {
		sseEvent(w, "message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1,"cache_read_input_tokens":20,"cache_creation_input_tokens":5}}}`)
		sseEvent(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for _, d := range []string{"Answer ", "number ", fmt.Sprint(n), "."} {
			sseEvent(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+d+`"}}`)
		}
		sseEvent(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
		sseEvent(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`)
		sseEvent(w, "message_stop", `{"type":"message_stop"}`)
	})
	b, err := New(Spec{Provider: ProviderClaudeCode, Model: "sonnet"}, Options{CLI: CLIOptions{
		Path: path, Dir: t.TempDir(),
		Env: realCLIEnv(t, "ANTHROPIC_API_KEY=sk-ant-test-0000000000", "ANTHROPIC_BASE_URL="+srv.URL,
			"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	env := realCLIEnv(t)
	if res := Probe(context.Background(), Spec{Provider: ProviderClaudeCode, Model: "sonnet"}, CLIOptions{Path: path, Env: env}); res.State != ProbeNeedsAuth {
		t.Errorf("probe with no login = %+v, want needs_auth", res)
	}
	if res := Probe(context.Background(), Spec{Provider: ProviderClaudeCode, Model: "sonnet"}, CLIOptions{Path: path, Env: append(env, "ANTHROPIC_API_KEY=sk-ant-test-0000000000")}); res.State != ProbeReady || res.Version == "" {
		t.Errorf("probe with a key = %+v, want ready with a version", res)
	}
	var evs []Event
	req := userReq("first question")
	first, err := b.Generate(context.Background(), req, collect(&evs))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if first.Text() != "Answer number 1." || deltas(evs) != first.Text() || countKind(evs, EventTextDelta) < 2 {
		t.Errorf("text %q streamed as %q in %d deltas", first.Text(), deltas(evs), countKind(evs, EventTextDelta))
	}
	if first.Usage.InputTokens != 100 || first.Usage.CachedTokens != 20 || first.Usage.OutputTokens != 12 || !first.CostReported || first.CostMicroUSD <= 0 {
		t.Errorf("usage %+v, cost %d (reported %v)", first.Usage, first.CostMicroUSD, first.CostReported)
	}
	if first.Session == nil || first.Session.ID == "" {
		t.Fatalf("no session: %+v", first.Session)
	}
	if body := api.body(0); !strings.Contains(body, "You are Coder.") || !strings.Contains(body, "first question") {
		t.Errorf("the CLI's request lacks the system prompt or the question: %.500s", body)
	}

	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: first.Text()}}},
		Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "second question"}}})
	req.Session = &Session{Provider: ProviderClaudeCode, ID: first.Session.ID, Seen: 2}
	second, err := b.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("second Generate: %v", err)
	}
	if second.Session == nil || second.Session.ID != first.Session.ID {
		t.Errorf("second session %+v, want %s resumed", second.Session, first.Session.ID)
	}
	// The resumed session holds the first exchange; only the new question
	// was sent.
	if body := api.body(1); !strings.Contains(body, "Answer number 1.") || !strings.Contains(body, "second question") || strings.Count(body, "first question") != 1 {
		t.Errorf("the resumed request does not carry the session's history once: %.2000s", body)
	}
}

func TestRealCLICodex(t *testing.T) {
	path := os.Getenv("SWITCHBOARD_TEST_CODEX_PATH")
	if path == "" {
		t.Skip("set SWITCHBOARD_TEST_CODEX_PATH to a codex program to run the real CLI")
	}
	var api apiFake
	srv := api.serve(t, "/v1/responses", func(w http.ResponseWriter, n int) {
		text := fmt.Sprintf("Answer number %d.", n)
		sseEvent(w, "response.created", `{"type":"response.created","response":{"id":"resp_1"}}`)
		sseEvent(w, "response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}`)
		sseEvent(w, "response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"`+text+`"}`)
		sseEvent(w, "response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"`+text+`"}]}}`)
		sseEvent(w, "response.completed", `{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1000},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":8},"total_tokens":1240}}}`)
	})
	b, err := New(Spec{Provider: ProviderCodex, Model: "gpt-5"}, Options{CLI: CLIOptions{
		Path: path, Dir: t.TempDir(), Env: realCLIEnv(t, "FAKE_KEY=k"),
		Args: []string{"-c", `model_provider="fake"`, "-c", `model_providers.fake.name="fake"`,
			"-c", `model_providers.fake.base_url="` + srv.URL + `/v1"`, "-c", `model_providers.fake.wire_api="responses"`,
			"-c", `model_providers.fake.env_key="FAKE_KEY"`, "-c", `model_providers.fake.supports_websockets=false`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res := Probe(context.Background(), Spec{Provider: ProviderCodex, Model: "gpt-5"}, CLIOptions{Path: path, Env: realCLIEnv(t)}); res.State != ProbeNeedsAuth || res.Version == "" {
		t.Errorf("probe with no login = %+v, want needs_auth with a version", res)
	}
	req := userReq("first question")
	first, err := b.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := Usage{InputTokens: 200, CachedTokens: 1000, OutputTokens: 40, ReasoningTokens: 8}
	if first.Text() != "Answer number 1." || first.Usage != want || first.Session == nil {
		t.Fatalf("first = %q, %+v, %+v", first.Text(), first.Usage, first.Session)
	}
	if body := api.body(0); !strings.Contains(body, "You are Coder.") || !strings.Contains(body, "first question") {
		t.Errorf("the CLI's request lacks the developer instructions or the question: %.500s", body)
	}
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: first.Text()}}},
		Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "second question"}}})
	req.Session = &Session{Provider: ProviderCodex, ID: first.Session.ID, Seen: 2, Totals: first.Session.Totals}
	second, err := b.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("second Generate: %v", err)
	}
	if second.Text() != "Answer number 2." || second.Usage != want || second.Session.ID != first.Session.ID {
		t.Errorf("second = %q, %+v, %+v; want the thread resumed and one call's usage", second.Text(), second.Usage, second.Session)
	}
	if body := api.body(1); !strings.Contains(body, "Answer number 1.") || !strings.Contains(body, "second question") {
		t.Errorf("the resumed request lacks the thread's history: %.2000s", body)
	}
}
