package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/app"
)

// update rewrites the generated reference pages instead of comparing them:
// go test ./cmd/switchboard -run TestReference -update
var update = flag.Bool("update", false, "rewrite docs/reference/cli.md from the binary's usage")

// referenceInvocations are the commands and subcommands whose -h text the
// CLI reference shows, in the order of the page.
var referenceInvocations = [][]string{
	{"serve"}, {"chat"}, {"migrate"}, {"version"},
	{"backup"}, {"restore"}, {"healthcheck"}, {"rotate-key"},
	{"grants", "list"}, {"grants", "revoke"},
	{"keys", "create"}, {"keys", "list"}, {"keys", "revoke"},
	{"tokens", "create"}, {"tokens", "list"}, {"tokens", "revoke"},
	{"sessions", "list"}, {"sessions", "end"},
	{"workspaces"}, {"agents"}, {"people"},
	{"audit"}, {"audit", "export"}, {"usage"}, {"budgets", "list"}, {"budgets", "extend"}, {"installs", "list"}, {"pairing"},
	{"personality", "show"}, {"personality", "set"}, {"personality", "history"},
	{"skills", "import"}, {"skills", "list"}, {"skills", "remove"},
	{"mcp", "status"},
	{"runs", "list"}, {"runs", "show", "ID"}, {"runs", "cancel", "ID"}, {"runs", "retry", "ID"}, {"runs", "start"},
	{"doctor"}, {"compare"}, {"bench"},
	{"bridge"}, {"bridge", "supervise"},
}

// cliReference renders docs/reference/cli.md: the top-level usage and what
// `switchboard CMD -h` prints for each command, run with an empty
// environment so that the defaults shown are the built-in ones.
func cliReference(t *testing.T) string {
	t.Helper()
	t.Chdir(t.TempDir()) // no switchboard.yaml or mcp-servers.json nearby
	noEnv := func(string) string { return "" }
	var b strings.Builder
	b.WriteString("# Commands\n\n")
	b.WriteString("<!-- Generated from the binary's usage by `go test ./cmd/switchboard -run TestReference -update`; do not edit. -->\n\n")
	b.WriteString("What `switchboard -h` and `switchboard COMMAND -h` print. Settings come\nfrom the environment (see [Settings](settings.md)); flags override them.\n\n")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, noEnv, nil, &out, &errOut); err != nil {
		t.Fatalf("switchboard -h: %v", err)
	}
	top := out.String()
	type section struct {
		names []string
		help  string
	}
	var sections []section
	for _, inv := range referenceInvocations {
		if !slices.ContainsFunc(commands, func(c command) bool { return c.name == inv[0] }) {
			t.Fatalf("%s is not in the commands table (commands.go)", inv[0])
		}
		out.Reset()
		errOut.Reset()
		args := append(append([]string{}, inv...), "-h")
		err := run(context.Background(), args, noEnv, strings.NewReader(""), &out, &errOut)
		if !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("switchboard %s: got error %v, want flag.ErrHelp\nstderr: %s", strings.Join(args, " "), err, errOut.String())
		}
		if out.Len() > 0 {
			t.Fatalf("switchboard %s printed to stdout: %q", strings.Join(args, " "), out.String())
		}
		// Subcommands that share one flag set (grants list and revoke,
		// runs show, cancel and retry) share one section.
		name := "switchboard " + strings.Join(inv, " ")
		if n := len(sections); n > 0 && sections[n-1].help == errOut.String() {
			sections[n-1].names = append(sections[n-1].names, name)
			continue
		}
		sections = append(sections, section{[]string{name}, errOut.String()})
	}
	// The commands table, each command linked to its first section.
	b.WriteString("| command | what it does | see |\n| --- | --- | --- |\n")
	for _, c := range commands {
		anchor := ""
		for _, s := range sections {
			if s.names[0] == "switchboard "+c.name || strings.HasPrefix(s.names[0], "switchboard "+c.name+" ") {
				anchor = slug(strings.Join(s.names, ", "))
				break
			}
		}
		if anchor == "" {
			t.Fatalf("command %s has no section: add it to referenceInvocations", c.name)
		}
		see := ""
		if c.doc != "" {
			see = "[docs](" + c.doc + ")"
		}
		what := strings.ReplaceAll(strings.Join(c.what, " "), "|", `\|`)
		b.WriteString("| [`" + c.name + "`](#" + anchor + ") | " + what + " | " + see + " |\n")
	}
	b.WriteString("\n## switchboard\n\n```text\n" + top + "```\n")
	for _, s := range sections {
		b.WriteString("\n## " + strings.Join(s.names, ", ") + "\n\n```text\n" + s.help + "```\n")
	}
	return b.String()
}

func TestReferenceCLI(t *testing.T) {
	page, err := filepath.Abs(filepath.Join("..", "..", "docs", "reference", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, page, cliReference(t))
}

// checkGenerated compares a committed generated page with what the code
// generates now, or rewrites it under -update.
func checkGenerated(t *testing.T, path, got string) {
	t.Helper()
	abs := path
	if *update {
		if err := os.WriteFile(abs, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s is stale: regenerate it with\n\tgo test ./cmd/switchboard -run TestReference -update\n%s", path, firstDiff(string(want), got))
	}
}

// firstDiff names the first line where the committed page and the
// generated one differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "first difference at line " + strconv.Itoa(i+1) + ":\n\tcommitted: " + wl + "\n\tgenerated: " + gl
		}
	}
	return ""
}

// settingsNotes follow the settings table.
const settingsNotes = `A malformed ` + "`" + `DATABASE_URL` + "`" + ` stops the start with an error naming the variable;
an agent whose backend is unknown or whose key is missing stops it with an
error naming the agent and the setting.

Secrets never reach people or logs: the values of the provider keys
(including each agent's ` + "`" + `api_key_env` + "`" + `), the Slack and Discord tokens, the
Slack signing secret, ` + "`" + `SWITCHBOARD_API_TOKEN` + "`" + ` and the password in
` + "`" + `DATABASE_URL` + "`" + ` are replaced by ` + "`" + `REDACTED` + "`" + ` wherever they would appear (error
messages shown in chat, the conversation log, the service log), whatever
their shape; so are strings shaped like keys and tokens (` + "`" + `sk-…` + "`" + `, ` + "`" + `sk-ant-…` + "`" + `,
` + "`" + `xoxb-…` + "`" + `, ` + "`" + `xapp-…` + "`" + `, ` + "`" + `Bearer …` + "`" + `, passwords in URLs). Values shorter than 5
characters are not redacted, so choose real secrets.`

// settingsReference renders docs/reference/settings.md from app.Settings.
func settingsReference() string {
	var b strings.Builder
	b.WriteString("# Settings\n\n")
	b.WriteString("<!-- Generated from app.Settings (internal/app/settings.go) by `go test ./cmd/switchboard -run TestReference -update`; do not edit. -->\n\n")
	b.WriteString("## Configuration\n\n| variable | default | what |\n| --- | --- | --- |\n")
	for _, s := range app.Settings {
		names := make([]string, len(s.Names))
		for i, n := range s.Names {
			names[i] = "`" + n + "`"
		}
		first := strings.Join(names, ", ")
		if s.Qualifier != "" {
			first += " " + s.Qualifier
		}
		cell := func(v string) string {
			if v == "" {
				return "| "
			}
			return "| " + v + " "
		}
		b.WriteString("| " + first + " " + cell(s.Default) + cell(s.Text) + "|\n")
	}
	b.WriteString("\n" + settingsNotes + "\n")
	return b.String()
}

func TestReferenceSettings(t *testing.T) {
	t.Parallel()
	page, err := filepath.Abs(filepath.Join("..", "..", "docs", "reference", "settings.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, page, settingsReference())
}

// TestCommandsReadOnlyDocumentedSettings: what the commands read from the
// environment (through app.FromEnv or beside it) is in app.Settings.
func TestCommandsReadOnlyDocumentedSettings(t *testing.T) {
	t.Chdir(t.TempDir())
	read := map[string]bool{}
	rec := func(name string) string {
		read[name] = true
		return ""
	}
	for _, inv := range referenceInvocations {
		args := append(append([]string{}, inv...), "-h")
		_ = run(context.Background(), args, rec, strings.NewReader(""), io.Discard, io.Discard)
	}
	if len(read) == 0 {
		t.Fatal("the commands read no setting: the recording environment is not used")
	}
	for name := range read {
		if !app.Documented(name) {
			t.Errorf("switchboard reads %s, which app.Settings does not document", name)
		}
	}
}

// slug is the anchor GitHub gives a heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}
