package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/compare"
	"github.com/switchboardhq/switchboard/internal/app"
)

const compareUsage = `usage: switchboard compare -models SPEC,SPEC,... [-system TEXT] [-max-tokens N] [-json] "prompt"

Runs the prompt on every model at once and prints each answer with its
latency, tokens and cost. A model that fails shows its error in its row.
Models are provider:model, e.g. anthropic:claude-sonnet-4-5,openai:gpt-4.1-mini,scripted:demo;
keys and endpoints come from ANTHROPIC_API_KEY, OPENAI_API_KEY and their _BASE_URL.
`

// compareCommand asks the models directly with the configured keys: no
// store and no running service are needed.
func compareCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, compareUsage); fs.PrintDefaults() }
	models := fs.String("models", "", "comma-separated provider:model specs (required)")
	system := fs.String("system", "", "a system prompt for every model")
	maxTokens := fs.Int("max-tokens", 0, "cap on each answer's tokens (default 4096)")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if strings.TrimSpace(*models) == "" {
		fs.Usage()
		return errors.New("compare: -models is required, e.g. -models anthropic:claude-sonnet-4-5,openai:gpt-4.1-mini")
	}
	req := &web.CompareRequest{Prompt: strings.Join(fs.Args(), " "), System: *system, MaxTokens: *maxTokens}
	for _, m := range strings.Split(*models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			req.Models = append(req.Models, m)
		}
	}
	rows, err := app.Compare(ctx, cfg, req)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(web.CompareResponse{Results: rows})
	}
	if err := compare.WriteTable(stdout, rows); err != nil {
		return err
	}
	// Every model failing is a failed command; some failing is a result.
	for _, r := range rows {
		if r.Error == "" {
			return nil
		}
	}
	return errors.New("compare: no model answered")
}
