// Package compare runs one prompt on several models side by side, for
// `switchboard compare` and POST /api/compare: each model's answer, how long
// it took, its tokens and what it cost. The models run at once; one that
// fails has its error in its own row and does not stop the others.
package compare

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core/model"
)

// MaxModels bounds one comparison, so one request cannot fan out without
// limit.
const MaxModels = 8

// Options configure a comparison.
type Options struct {
	// Models are the models to ask, as provider:model
	// (anthropic:claude-sonnet-4-5, openai:gpt-4.1-mini,
	// scripted:path/to/script.yaml); 1 to MaxModels of them.
	Models []string
	// Prompt is the one user message every model gets.
	Prompt string
	// System is an optional system prompt, the same for every model.
	System string
	// MaxTokens caps each answer (0: model.DefaultMaxTokens).
	MaxTokens int
	// Timeout bounds each model's call (0: no bound beyond ctx).
	Timeout time.Duration
	// BackendFunc builds the backend for a model spec, with its key and
	// endpoint resolved by the caller; required.
	BackendFunc func(spec model.Spec) (model.Backend, error)
	// Now is the clock latency is measured with (default time.Now).
	Now func() time.Time
}

func (o *Options) validate() error {
	switch {
	case len(o.Models) == 0:
		return errors.New("models: name at least one model, as provider:model")
	case len(o.Models) > MaxModels:
		return fmt.Errorf("models: %d models, at most %d at once", len(o.Models), MaxModels)
	case strings.TrimSpace(o.Prompt) == "":
		return errors.New("prompt: empty; give the prompt to send to every model")
	case o.MaxTokens < 0:
		return fmt.Errorf("max_tokens: %d must not be negative", o.MaxTokens)
	case o.BackendFunc == nil:
		return errors.New("compare: Options.BackendFunc is required")
	}
	return nil
}

// Result is one model's row.
type Result struct {
	// Model is the model as asked (provider:model).
	Model string `json:"model"`
	// Answered is the model the provider reports having answered with.
	Answered string `json:"answered,omitempty"`
	Answer   string `json:"answer"`
	// Latency is from the request to the complete answer; LatencyMS is
	// the same in milliseconds, for JSON readers.
	Latency      time.Duration `json:"-"`
	LatencyMS    int64         `json:"latency_ms"`
	InputTokens  int64         `json:"input_tokens"`
	OutputTokens int64         `json:"output_tokens"`
	// CostMicroUSD is the list-price cost in millionths of a dollar; Priced
	// is false when the model's price is not known (a local server), so a
	// zero cost is not mistaken for free.
	CostMicroUSD int64 `json:"cost_micro_usd"`
	Priced       bool  `json:"priced"`
	// Error, when set, is why this model gave no answer.
	Error string `json:"error,omitempty"`
}

// Run asks every model at once and returns their rows in the order of
// Options.Models. The error is for options that are wrong as a whole; a
// model that cannot be built or fails has its Error set instead.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	specs := make([]model.Spec, len(o.Models))
	for i, m := range o.Models {
		spec, err := model.ParseSpec(m)
		if err != nil {
			return nil, fmt.Errorf("models[%d]: %w", i, err)
		}
		specs[i] = spec
	}
	req := &model.Request{
		Messages:  []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartText, Text: o.Prompt}}}},
		MaxTokens: o.MaxTokens,
	}
	if s := strings.TrimSpace(o.System); s != "" {
		req.System = []model.SystemBlock{{Text: s}}
	}
	out := make([]Result, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() { out[i] = ask(ctx, o, spec, req) })
	}
	wg.Wait()
	return out, nil
}

func ask(ctx context.Context, o Options, spec model.Spec, req *model.Request) Result {
	r := Result{Model: spec.String()}
	b, err := o.BackendFunc(spec)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	// Each backend gets its own copy: none may see another's changes.
	own := *req
	start := o.Now()
	resp, err := b.Generate(ctx, &own, nil)
	r.Latency = o.Now().Sub(start)
	r.LatencyMS = r.Latency.Milliseconds()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Answer = resp.Text()
	r.Answered = resp.Model
	r.InputTokens = resp.Usage.TotalInputTokens()
	r.OutputTokens = resp.Usage.OutputTokens
	if p, ok := model.PriceFor(spec.Provider, firstNonEmpty(resp.Model, spec.Model)); ok {
		r.CostMicroUSD, r.Priced = resp.Usage.CostMicroUSD(p), true
	}
	return r
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
