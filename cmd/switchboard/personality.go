package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
)

const personalityUsage = "personality: use 'personality show AGENT [-version N]', " +
	"'personality set AGENT -file F' (- or no -file: standard input) or 'personality history AGENT'"

// personalityCommand reads and replaces an agent's personality document
// straight in the store, as the operator: a replacement is not held to the
// agent's shrink guard, and a running service uses it from the next turn.
func personalityCommand(ctx context.Context, args []string, cfg app.Config, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(personalityUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("personality "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store: postgres://..., sqlite:PATH (DATABASE_URL)")
	file := fs.String("file", "", "set: the new document (a Markdown file; - for standard input)")
	version := fs.Int("version", 0, "show: this version instead of the current one")
	// The agent's name may come before or after the flags.
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) > 0 {
		name := rest[0]
		if err := fs.Parse(rest[1:]); err != nil {
			return err
		}
		rest = append([]string{name}, fs.Args()...)
	}
	if len(rest) != 1 {
		return errors.New(personalityUsage)
	}
	agent := rest[0]

	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	p := core.NewPersonalities(st, nil, cfg.Now)
	switch sub {
	case "show":
		doc, err := p.Version(ctx, agent, *version)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, doc.Text)
		return nil
	case "set":
		var text []byte
		if *file == "" || *file == "-" {
			text, err = io.ReadAll(stdin)
		} else {
			text, err = os.ReadFile(*file)
		}
		if err != nil {
			return fmt.Errorf("reading the new personality: %w", err)
		}
		if strings.TrimSpace(string(text)) == "" {
			return errors.New("personality set: the new document is empty")
		}
		doc, err := p.Replace(ctx, &core.PersonalityReplaceParams{Agent: agent, Text: string(text), Author: core.PersonalityOperatorAuthor})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s's personality is now version %d (%d characters)\n", agent, doc.Version, utf8.RuneCountInString(doc.Text))
		return nil
	case "history":
		docs, err := p.History(ctx, agent, 1000)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "VERSION\tCREATED\tAUTHOR\tCHARACTERS\tFIRST LINE")
		for _, d := range docs {
			first, _, _ := strings.Cut(d.Text, "\n")
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", d.Version, d.CreatedAt.Format(time.RFC3339), d.Author, utf8.RuneCountInString(d.Text), first)
		}
		return tw.Flush()
	}
	return errors.New(personalityUsage)
}
