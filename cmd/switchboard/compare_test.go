package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// TestCompare: `switchboard compare` asks the fake Anthropic, the fake
// OpenAI and a scripted model at once and prints one row each with the
// answer, tokens and cost; a model whose provider refuses the key shows
// the error in its own row while the others still answer.
func TestCompare(t *testing.T) {
	t.Parallel()
	anth := modeltest.NewAnthropic(t)
	anth.APIKey = "anth-key"
	anth.Push(modeltest.Reply{Text: "Paris, said Claude.", Usage: &modeltest.Usage{InputTokens: 1000, OutputTokens: 200}})
	oai := modeltest.NewOpenAI(t)
	oai.APIKey = "oai-key"
	oai.Push(modeltest.Reply{Text: "Paris, said GPT.", Usage: &modeltest.Usage{InputTokens: 500, OutputTokens: 100}})
	script := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(script, []byte("turns:\n  - text: Paris, said the script.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := env(map[string]string{
		"ANTHROPIC_API_KEY": "anth-key", "ANTHROPIC_BASE_URL": anth.URL,
		"OPENAI_API_KEY": "oai-key", "OPENAI_BASE_URL": oai.URL,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	models := "anthropic:claude-sonnet-4-5,openai:gpt-4.1-mini,scripted:" + script
	if err := run(ctx, []string{"compare", "-models", models, "What is the capital of France?"}, getenv, nil, &out, &errOut); err != nil {
		t.Fatalf("compare: %v\n%s", err, errOut.String())
	}
	table := out.String()
	// Claude: 1000 in at $3/M + 200 out at $15/M = $0.006; GPT-4.1 mini:
	// 500 at $0.40/M + 100 at $1.60/M = $0.00036; scripted: free.
	for _, want := range []string{
		"MODEL", "LATENCY", "COST",
		"anthropic:claude-sonnet-4-5", "$0.006000", "Paris, said Claude.",
		"openai:gpt-4.1-mini", "$0.000360", "Paris, said GPT.",
		"scripted:" + script, "$0.000000", "Paris, said the script.",
	} {
		if !strings.Contains(table, want) {
			t.Fatalf("compare printed:\n%s\nwant it to contain %q", table, want)
		}
	}
	for _, f := range []*modeltest.Fake{anth, oai} {
		reqs := f.Requests()
		if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "What is the capital of France?") {
			t.Fatalf("the fake got %d requests, want one carrying the prompt", len(reqs))
		}
	}

	// A wrong OpenAI key: that row says why, the others answer, and -json
	// gives the same rows.
	anth.Push(modeltest.Reply{Text: "Still Paris."})
	bad := env(map[string]string{
		"ANTHROPIC_API_KEY": "anth-key", "ANTHROPIC_BASE_URL": anth.URL,
		"OPENAI_API_KEY": "wrong-key", "OPENAI_BASE_URL": oai.URL,
	})
	out.Reset()
	if err := run(ctx, []string{"compare", "-json", "-models", "anthropic:claude-sonnet-4-5,openai:gpt-4.1-mini,scripted:demo", "Capital?"}, bad, nil, &out, &errOut); err != nil {
		t.Fatalf("compare with one bad key: %v\n%s", err, errOut.String())
	}
	var resp web.CompareResponse
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("compare -json printed %q: %v", out.String(), err)
	}
	if len(resp.Results) != 3 {
		t.Fatalf("got %d rows, want 3: %+v", len(resp.Results), resp.Results)
	}
	if r := resp.Results[0]; r.Error != "" || r.Answer != "Still Paris." || !r.Priced {
		t.Fatalf("anthropic row %+v, want the answer, priced", r)
	}
	if r := resp.Results[1]; r.Error == "" || !strings.Contains(r.Error, "401") || r.Answer != "" {
		t.Fatalf("openai row %+v, want its 401 in the row", r)
	}
	if r := resp.Results[2]; r.Error != "" || r.Answer == "" {
		t.Fatalf("scripted row %+v, want the demo's answer", r)
	}

	// Only failures: the command fails; no models: a clear error.
	out.Reset()
	err := run(ctx, []string{"compare", "-models", "openai:gpt-4.1-mini", "Capital?"}, bad, nil, &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "error:") {
		t.Fatalf("compare with every model failing: %v, printed %q; want an error and the row's reason", err, out.String())
	}
	if err := run(ctx, []string{"compare", "Capital?"}, bad, nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "-models") {
		t.Fatalf("compare without -models: %v, want an error naming -models", err)
	}
}
