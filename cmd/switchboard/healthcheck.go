package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
)

// healthcheckCommand asks the running service on this machine whether it is
// ready (GET /readyz) and fails unless it answers 200. It is the container
// image's HEALTHCHECK: the image has no shell and no curl, so the binary
// checks itself.
func healthcheckCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the service's base URL (default: this machine at SWITCHBOARD_ADDR)")
	path := fs.String("path", "/readyz", "the probe: /readyz (ready for work) or /healthz (alive)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return fmt.Errorf("healthcheck: -timeout must be positive, got %s", *timeout)
	}
	base := *url
	if base == "" {
		base = localURL(cfg.Addr)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+*path, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: -url %q: %w", base, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s: %s", req.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(stdout, "%s: %s\n", req.URL, strings.TrimSpace(string(body)))
	return nil
}
