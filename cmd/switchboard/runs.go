package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/app"
)

const runsUsage = `usage: switchboard runs [list|show ID|cancel ID|retry ID] [-url URL] [-json]

  list       the latest runs: id, status, lead, goal (-status running|done|failed|cancelled)
  show ID    one run: each step's agent, status, model, tokens, cost and output, and its events
  cancel ID  cancel a running run; its working steps' model calls are stopped
  retry ID   re-run a failed or cancelled run's failed and cancelled steps

It asks the running service at -url (default: SWITCHBOARD_ADDR on this
machine) with SWITCHBOARD_API_TOKEN, as GET/POST /api/runs do.
`

// runsCommand lists, shows, cancels and retries runs through the running
// service's API: a cancel stops turns running in that service.
func runsCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	var id string
	if sub == "show" || sub == "cancel" || sub == "retry" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			fmt.Fprint(stderr, runsUsage)
			return fmt.Errorf("runs %s: say which run (its id)", sub)
		}
		id, args = args[0], args[1:]
	} else if sub != "list" {
		fmt.Fprint(stderr, runsUsage)
		return fmt.Errorf("runs: unknown subcommand %q (list, show, cancel or retry)", sub)
	}
	fs := flag.NewFlagSet("runs "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", localURL(cfg.Addr), "the running service's address")
	asJSON := fs.Bool("json", false, "print the answer as JSON, as the API gives it")
	status := fs.String("status", "", "list only runs with this status")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("runs %s: unexpected arguments %q", sub, fs.Args())
	}
	call := func(method, path string, out any) error {
		return runsAPI(ctx, cfg, *base, method, path, out)
	}
	switch sub {
	case "list":
		var out struct {
			Runs []web.RunJSON `json:"runs"`
		}
		path := "/api/runs"
		if *status != "" {
			path += "?status=" + *status
		}
		if err := call(http.MethodGet, path, &out); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, out)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tLEAD\tSTARTED\tGOAL")
		for _, r := range out.Runs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.Lead, r.CreatedAt.Format(time.RFC3339), r.Goal)
		}
		return tw.Flush()
	case "show":
		var r web.RunJSON
		if err := call(http.MethodGet, "/api/runs/"+id, &r); err != nil {
			return err
		}
		var evs struct {
			Events []web.RunEventJSON `json:"events"`
		}
		if err := call(http.MethodGet, "/api/runs/"+id+"/events", &evs); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"run": r, "events": evs.Events})
		}
		printRun(stdout, &r)
		fmt.Fprintln(stdout, "\nEVENTS")
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, e := range evs.Events {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.At.Format(time.RFC3339), dash(e.Step), e.Kind, dash(e.Status), oneLine(e.Detail))
		}
		return tw.Flush()
	default: // cancel, retry
		var r web.RunJSON
		if err := call(http.MethodPost, "/api/runs/"+id+"/"+sub, &r); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, r)
		}
		printRun(stdout, &r)
		return nil
	}
}

func printRun(w io.Writer, r *web.RunJSON) {
	fmt.Fprintf(w, "run %s  %s  lead %s\n", r.ID, r.Status, r.Lead)
	if r.Goal != "" {
		fmt.Fprintf(w, "goal: %s\n", r.Goal)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tAGENT\tSTATUS\tMODEL\tATTEMPTS\tIN\tOUT\tCOST USD\tOUTPUT")
	for _, s := range r.Steps {
		out := s.Output
		if s.Error != "" {
			out = s.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%.4f\t%s\n", s.Key, s.Agent, s.Status, dash(s.Model), s.Attempts,
			s.InputTokens, s.OutputTokens, float64(s.CostMicroUSD)/1e6, oneLine(out))
	}
	_ = tw.Flush()
	if r.Result != "" {
		fmt.Fprintf(w, "result: %s\n", oneLine(r.Result))
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}

// runsAPI calls the running service's API with the operator token.
func runsAPI(ctx context.Context, cfg app.Config, base, method, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, body)
	if err != nil {
		return fmt.Errorf("runs: -url %q: %w", base, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cfg.APIToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("runs: asking the service at %s (is it running? -url): %w", base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("runs: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return fmt.Errorf("runs: %s", e.Error)
		}
		return fmt.Errorf("runs: the service answered %s: %s", resp.Status, strings.TrimSpace(string(raw)))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return errors.Join(fmt.Errorf("runs: decoding the answer"), err)
	}
	return nil
}
