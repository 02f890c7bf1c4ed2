package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	runpkg "github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/core/run/plan"
	"github.com/switchboardhq/switchboard/internal/app"
)

const runsUsage = `usage: switchboard runs [list|show ID|cancel ID|retry ID|start -lead AGENT -f PLAN] [-url URL] [-json]

  list       the latest runs: id, status, lead, goal (-status running|done|failed|cancelled)
  show ID    one run: each step's agent, status, model, tokens, cost and output, and its events
  cancel ID  cancel a running run; its working steps' model calls are stopped
  retry ID   re-run a failed or cancelled run's failed and cancelled steps
  start      start a run without a chat: the plan in -f (a JSON file, - for stdin; the
             plan_run tool's input) led by -lead, optionally in -workspace and titled
             -title; prints the run's id on stdout and what started on stderr

It asks the running service at -url (default: SWITCHBOARD_ADDR on this
machine) with SWITCHBOARD_API_TOKEN, as GET/POST /api/runs do.
`

// runsCommand lists, shows, cancels, retries and starts runs through the
// running service's API: a cancel stops turns running in that service.
func runsCommand(ctx context.Context, args []string, cfg app.Config, stdin io.Reader, stdout, stderr io.Writer) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	needsID := sub == "show" || sub == "cancel" || sub == "retry"
	if !needsID && sub != "list" && sub != "start" {
		fmt.Fprint(stderr, runsUsage)
		return fmt.Errorf("runs: unknown subcommand %q (list, show, cancel, retry or start)", sub)
	}
	fs := flag.NewFlagSet("runs "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", localURL(cfg.Addr), "the running service's address")
	asJSON := fs.Bool("json", false, "print the answer as JSON, as the API gives it")
	var status *string
	var start startFlags
	if sub == "start" {
		fs.StringVar(&start.lead, "lead", "", "the agent that leads the run (required)")
		fs.StringVar(&start.file, "f", "", "the plan: a JSON file, or - for stdin (required)")
		fs.StringVar(&start.workspace, "workspace", "", "the workspace of the run's conversation: a workspace id, or a Slack team or Discord guild bound to one")
		fs.StringVar(&start.title, "title", "", "the title of the run's conversation (default: the plan's goal)")
	} else {
		status = fs.String("status", "", "list only runs with this status")
	}
	// Flags may stand before or after the run's id (runs show -url URL ID).
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	var id string
	if needsID {
		if len(positional) == 0 {
			fmt.Fprint(stderr, runsUsage)
			return fmt.Errorf("runs %s: say which run (its id)", sub)
		}
		id, positional = positional[0], positional[1:]
	}
	if len(positional) > 0 {
		return fmt.Errorf("runs %s: unexpected arguments %q", sub, positional)
	}
	call := func(method, path string, out any) error {
		return runsAPI(ctx, cfg, *base, method, path, nil, out)
	}
	switch sub {
	case "start":
		body, err := start.request(stdin)
		if err != nil {
			return err
		}
		var r web.RunJSON
		if err := runsAPI(ctx, cfg, *base, http.MethodPost, "/api/runs", body, &r); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, r)
		}
		fmt.Fprintln(stdout, r.ID)
		goal := ""
		if r.Goal != "" {
			goal = ": " + oneLine(r.Goal)
		}
		fmt.Fprintf(stderr, "run %s started, %d steps led by %s%s (follow it: switchboard runs show %s)\n", runpkg.ShortOf(r.ID), len(r.Steps), r.Lead, goal, r.ID)
		return nil
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

// startFlags are the flags of runs start.
type startFlags struct {
	lead, file, workspace, title string
}

// request reads the plan (from stdin when -f is -) into the body of
// POST /api/runs. The plan is checked against its schema here; whether
// its agents exist, the service decides.
func (f *startFlags) request(stdin io.Reader) (*web.StartRunRequest, error) {
	switch {
	case f.lead == "":
		return nil, errors.New("runs start: -lead is required: the agent that leads the run")
	case f.file == "":
		return nil, errors.New("runs start: -f is required: the plan, a JSON file (- for stdin)")
	}
	var raw []byte
	var err error
	if f.file == "-" {
		if stdin == nil {
			stdin = strings.NewReader("")
		}
		raw, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	} else {
		raw, err = os.ReadFile(f.file)
	}
	if err != nil {
		return nil, fmt.Errorf("runs start: -f %s: %w", f.file, err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("runs start: -f %s is empty; want the plan as JSON: {\"goal\": ..., \"steps\": [...]}", f.file)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("runs start: -f %s: %w", f.file, err)
	}
	return &web.StartRunRequest{Lead: f.lead, Plan: p, Workspace: f.workspace, Title: f.title}, nil
}

// runsAPI calls the running service's API with the operator token; in,
// when not nil, is the JSON body (a POST without one sends {}).
func runsAPI(ctx context.Context, cfg app.Config, base, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var body io.Reader
	switch {
	case in != nil:
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("runs: encoding the request: %w", err)
		}
		body = bytes.NewReader(raw)
	case method == http.MethodPost:
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
	if resp.StatusCode/100 != 2 {
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
