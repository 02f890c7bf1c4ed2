package main

import "strings"

// command is one line of the top-level usage, and one row of the commands
// table of docs/reference/cli.md (generated from this list).
type command struct {
	name string
	// what it does: the first line follows the name, the others are
	// indented under it (a synopsis, mostly).
	what []string
	// doc is where the docs explain it, relative to docs/reference/;
	// empty for none.
	doc string
}

var commands = []command{
	{"serve", []string{"run the service (HTTP, workers, Slack and Discord when configured)"}, "../deploy.md"},
	{"chat", []string{"talk to an agent in this terminal"}, ""},
	{"migrate", []string{"apply database migrations and print the schema version"}, ""},
	{"backup", []string{"a consistent copy of the store while it runs, written to PATH: backup [-force] [-pg-dump P] PATH"}, "../production.md#backups-and-restore"},
	{"restore", []string{"put a backup into the store DATABASE_URL names (an empty one, or -force for a SQLite file",
		"no process holds), then migrate: restore [-force] [-pg-restore P] PATH"}, "../production.md#backups-and-restore"},
	{"bridge", []string{"run runs_on: bridge agents' model calls on this machine, for a service it reaches:",
		"bridge -url URL [-token T] [-agent NAME]... | bridge supervise -f hosts.yaml"}, "../bridge.md"},
	{"healthcheck", []string{"exit 0 when the service on this machine is ready (GET /readyz): healthcheck [-url URL] [-path /healthz]"}, ""},
	{"version", []string{"the release, commit, build date and schema version of this binary: version [-json]"}, ""},
	{"rotate-key", []string{"seal every stored secret again under the first key of SWITCHBOARD_SECRET_KEY"}, "../access.md#slack-across-workspaces-secrets-at-rest"},
	{"grants", []string{`list the standing grants ("Always allow"), or revoke one:`,
		"grants list [-workspace ID] [-revoked] | grants revoke ID"}, "../access.md#the-guard-policy-standing-grants-and-who-decides"},
	{"keys", []string{"agent keys and host tokens for the API: create, list, revoke"}, "../access.md#keys-and-sessions"},
	{"tokens", []string{"personal access tokens: create, list, revoke"}, "../access.md#keys-and-sessions"},
	{"sessions", []string{"console sessions and personal tokens with their last use, or end one:",
		"sessions [list] [--person ID] [--workspace REF] [--json] | sessions end ID"}, "../access.md#sessions"},
	{"workspaces", []string{"create, list and manage workspaces, members and team bindings"}, "../access.md#access-workspaces-and-the-install-flow"},
	{"agents", []string{"publish, pin and give agents to people"}, "../access.md#access-workspaces-and-the-install-flow"},
	{"people", []string{"delete a person's data on request: people forget PERSON [-delete-messages]"}, "../production.md#retention-and-deleting-a-persons-data"},
	{"audit", []string{"list guarded tool calls with their outcome and who decided; export a time range as JSON lines:",
		"audit [filters] | audit export [-since T] [-until T] [-workspace ID] [-o FILE]"}, "../access.md#reading-the-audit"},
	{"usage", []string{"tokens, cached and cache-write tokens, cost and cache hit rate",
		"per agent, conversation and day: usage [-days N] [-json]"}, "../agents.md#the-prompt-cache-and-usage"},
	{"budgets", []string{"spending budgets: spend today and this month against each limit, or a one-off extension:",
		"budgets [list] [-json] | budgets extend KEY -usd N [-monthly]"}, "../operate.md#budgets"},
	{"installs", []string{"the Slack workspaces and organisations the app is installed in: who installed it,",
		"scopes, token expiry and renewal, last event: installs [list] [-json]"}, "../slack.md#the-installs-view"},
	{"pairing", []string{"list pairing codes strangers were given, or approve one:",
		"pairing list | pairing approve CODE"}, "../access.md#who-may-talk-to-agents"},
	{"personality", []string{"an agent's personality document: show, set or history:",
		"personality show AGENT [-version N] | personality set AGENT -file F | personality history AGENT"}, "../agents.md#what-an-agent-knows"},
	{"skills", []string{"import skills (a folder, .zip, .tar.gz or https:// URL), list or remove them:",
		"skills import PATH|URL [--agent NAME] | skills list | skills remove NAME [--agent NAME]"}, "../agents.md#skills"},
	{"mcp", []string{"the outside MCP servers of the running service: mcp status [-url URL] [-json]"}, "../mcp.md#mcp-tools-from-outside-agents-as-tools"},
	{"runs", []string{"plans being carried out: runs [list|show ID|cancel ID|retry ID] [-url URL] [-json];",
		"start one without a chat: runs start -lead AGENT -f PLAN.json [-workspace W]"}, "../teams.md#plans-and-runs"},
	{"doctor", []string{"check the setup: config, database, tokens, scopes and intents, models, MCP servers,",
		"public URL; each problem with its fix: doctor [-url URL] [-json]"}, "../operate.md#switchboard-doctor"},
	{"compare", []string{"one prompt on several models side by side: answer, latency, tokens, cost:",
		`compare -models anthropic:…,openai:…,scripted:… [-json] "prompt"`}, "../agents.md#comparing-models"},
	{"bench", []string{"measure the main figures on the configured store, each against a baseline in the same run:",
		"bench [-short] [-json] [-workers N] [rss|append|queue|turn|ack|catchup|tail|first|start]"}, "../operate.md#switchboard-bench"},
}

// usage is the top-level usage, from commands: a name longer than the
// column gets a line of its own.
var usage = func() string {
	const indent = "            "
	var b strings.Builder
	b.WriteString("usage: switchboard <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		if len(c.name) < 10 {
			b.WriteString("  " + c.name + strings.Repeat(" ", 10-len(c.name)) + c.what[0] + "\n")
		} else {
			b.WriteString("  " + c.name + "\n" + indent + c.what[0] + "\n")
		}
		for _, l := range c.what[1:] {
			b.WriteString(indent + l + "\n")
		}
	}
	b.WriteString("\nConfiguration comes from the environment (see docs/reference/settings.md); flags override it.\n")
	b.WriteString("Run 'switchboard <command> -h' for a command's flags.\n")
	return b.String()
}()
