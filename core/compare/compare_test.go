package compare_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/compare"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// TestRunAsksAtOnce: the models are asked at the same time. The fake
// Anthropic holds its answer until the fake OpenAI has finished one, which
// only happens if the two requests are in flight together; a sequential
// run would wait for ever (here: until the test's deadline).
func TestRunAsksAtOnce(t *testing.T) {
	anth := modeltest.NewAnthropic(t)
	oai := modeltest.NewOpenAI(t)
	release := make(chan struct{})
	anth.Push(modeltest.Reply{Text: "from claude", Block: release})
	oai.Push(modeltest.Reply{Text: "from gpt"})
	oai.OnStreamEnd(func() { close(release) })
	urls := map[string]string{model.ProviderAnthropic: anth.URL, model.ProviderOpenAI: oai.URL}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows, err := compare.Run(ctx, compare.Options{
		Models: []string{"anthropic:claude-haiku-4-5", "openai:gpt-4.1-nano"},
		Prompt: "hi",
		BackendFunc: func(spec model.Spec) (model.Backend, error) {
			return model.New(spec, model.Options{APIKey: "k", BaseURL: urls[spec.Provider]})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Answer != "from claude" || rows[1].Answer != "from gpt" {
		t.Fatalf("rows %+v, want both answers in the order asked", rows)
	}
	var out bytes.Buffer
	if err := compare.WriteTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "== anthropic:claude-haiku-4-5 ==\nfrom claude") {
		t.Fatalf("table:\n%s\nwant each whole answer under its model", out.String())
	}
}

// TestRunOptions: bad options are refused with the field named.
func TestRunOptions(t *testing.T) {
	b := func(model.Spec) (model.Backend, error) { return nil, nil }
	cases := []struct {
		o    compare.Options
		want string
	}{
		{compare.Options{Prompt: "x", BackendFunc: b}, "models"},
		{compare.Options{Models: []string{"scripted:demo"}, Prompt: " ", BackendFunc: b}, "prompt"},
		{compare.Options{Models: make([]string, compare.MaxModels+1), Prompt: "x", BackendFunc: b}, "at most"},
		{compare.Options{Models: []string{"nope"}, Prompt: "x", BackendFunc: b}, "models[0]"},
	}
	for _, tc := range cases {
		if _, err := compare.Run(context.Background(), tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v, want an error naming %q", tc.o, err, tc.want)
		}
	}
}
