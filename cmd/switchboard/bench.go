package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/store/dial"
)

// benchCommand runs `switchboard bench [flags] [figure...]`: the main
// figures on the configured store, each with its baseline in the same run.
func benchCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: switchboard bench [flags] [%s]\n\nfigures (all when none is named, but the long ones, which run only when named):\n", strings.Join(bench.Names(), "|"))
		bench.Describe(stderr)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	opts := bench.Options{DatabaseURL: cfg.DatabaseURL}
	fs.StringVar(&opts.DatabaseURL, "database-url", cfg.DatabaseURL, "store to measure: postgres://..., sqlite:PATH, or empty for "+dial.DefaultSQLitePath+" (DATABASE_URL); each figure uses a fresh schema or file of its own")
	fs.BoolVar(&opts.Short, "short", false, "small sizes: checks that each figure runs, measures nothing")
	fs.IntVar(&opts.Workers, "workers", 8, "the queue burn-down's and the prune figure's worker concurrency")
	fs.DurationVar(&opts.Duration, "duration", 0, "how long the prune figure finishes work (default 10m; 5s with -short)")
	fs.IntVar(&opts.SoakEntries, "soak-entries", 0, "entries the soak fills (default 1000000; 4000 with -short)")
	fs.IntVar(&opts.SoakConversations, "soak-conversations", 0, "conversations the soak spreads them over (default 100000; 400 with -short)")
	fs.DurationVar(&opts.SoakDuration, "soak-duration", 0, "the soak's traffic, an hour's compressed into it (default 5m; 3s with -short)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if opts.Workers < 1 || opts.Workers > 256 {
		return fmt.Errorf("bench: -workers %d must be from 1 to 256", opts.Workers)
	}
	// Warnings and errors only: a figure that quietly measured failures
	// would measure nothing.
	opts.Logger = slog.New(redact.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}), nil))
	results, err := bench.Run(ctx, opts, fs.Args())
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(results); jerr != nil && err == nil {
			err = jerr
		}
	} else if len(results) > 0 {
		bench.Print(stdout, results)
	}
	return err
}
