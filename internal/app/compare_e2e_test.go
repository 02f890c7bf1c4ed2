package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestCompareAPI: POST /api/compare on the running service asks the fake
// Anthropic and OpenAI servers and the scripted demo at once, with the
// service's keys, and answers one JSON row per model; an unknown provider
// is a 400 naming it, and only the operator may compare.
func TestCompareAPI(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		anth := modeltest.NewAnthropic(t)
		anth.Push(modeltest.Reply{Text: "Claude says 4.", Usage: &modeltest.Usage{InputTokens: 10, OutputTokens: 3}})
		oai := modeltest.NewOpenAI(t)
		oai.Push(modeltest.Reply{Status: http.StatusBadRequest, ErrorMessage: "The model `gpt-nope` does not exist"})
		const token = "op-token-compare"
		envs := map[string]string{
			"SWITCHBOARD_MODEL": "scripted:demo",
			"ANTHROPIC_API_KEY": "k1", "ANTHROPIC_BASE_URL": anth.URL,
			"OPENAI_API_KEY": "k2", "OPENAI_BASE_URL": oai.URL,
		}
		a, err := app.Open(context.Background(), app.Config{
			Addr: "127.0.0.1:0", DatabaseURL: db, APIToken: token,
			Env: func(k string) string { return envs[k] }, Logger: testenv.Logger(t),
		})
		if err != nil {
			t.Fatalf("opening the service: %v", err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop(context.Background()) })
		post := func(tok, body string) (*http.Response, []byte) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+a.Addr()+"/api/compare", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			return resp, buf.Bytes()
		}
		resp, body := post(token, `{"models":["anthropic:claude-haiku-4-5","openai:gpt-nope","scripted:demo"],"prompt":"2+2?"}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /api/compare = %d %s, want 200", resp.StatusCode, body)
		}
		var got web.CompareResponse
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("decoding %s: %v", body, err)
		}
		if len(got.Results) != 3 {
			t.Fatalf("got %d rows, want 3: %s", len(got.Results), body)
		}
		// claude-haiku-4-5: 10 in at $1/M + 3 out at $5/M = 25 micro-dollars.
		if r := got.Results[0]; r.Model != "anthropic:claude-haiku-4-5" || r.Answer != "Claude says 4." || r.InputTokens != 10 || r.OutputTokens != 3 || r.CostMicroUSD != 25 || r.Error != "" {
			t.Fatalf("anthropic row %+v, want Claude's answer, 10/3 tokens, 25 micro-dollars", r)
		}
		if r := got.Results[1]; r.Error == "" || !strings.Contains(r.Error, "does not exist") {
			t.Fatalf("openai row %+v, want the provider's error in the row", r)
		}
		if r := got.Results[2]; r.Answer == "" || r.Error != "" || !r.Priced || r.CostMicroUSD != 0 {
			t.Fatalf("scripted row %+v, want the demo's free answer", r)
		}

		resp, body = post(token, `{"models":["gemini:pro"],"prompt":"hi"}`)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `unknown provider \"gemini\"`) {
			t.Fatalf("an unknown provider = %d %s, want 400 naming it", resp.StatusCode, body)
		}
		resp, body = post(token, `{"models":["scripted:demo"],"prompt":"  "}`)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "prompt") {
			t.Fatalf("an empty prompt = %d %s, want 400 naming the prompt", resp.StatusCode, body)
		}
		if resp, body = post("", `{"models":["scripted:demo"],"prompt":"hi"}`); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("without the token = %d %s, want 401", resp.StatusCode, body)
		}
	})
}
