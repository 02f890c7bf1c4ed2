package app

import "slices"

// Setting is one row of the settings reference (docs/reference/settings.md,
// generated from Settings): the environment variables it documents, their
// default and what they do, in Markdown.
type Setting struct {
	// Names are the variables the row documents together.
	Names []string
	// Qualifier follows the names in the row, for a variable documented
	// twice (SWITCHBOARD_PUBLIC_URL for the install flow and the console).
	Qualifier string
	// Prefix, when set, documents every variable that starts with it too
	// (OTEL_: the OpenTelemetry SDK's standard variables).
	Prefix  string
	Default string
	Text    string
}

// Settings is every environment variable the service reads: FromEnv and the
// readers it hands Config.Env to (the default model, the model credentials,
// tracing). A test fails when one of them reads a variable missing here, or
// when a variable here is read by none of them.
var Settings = []Setting{
	{Names: []string{"DATABASE_URL"}, Default: "empty: SQLite at `./data/switchboard.db`", Text: "`postgres://user@host:5432/db` for Postgres, or `sqlite:PATH`. Add `switchboard_simple_protocol=1` to a Postgres URL behind PgBouncer in transaction mode (see [Behind a connection pooler](../production.md#behind-a-connection-pooler)), and `switchboard_schema=NAME` to keep the tables in their own schema (not through a transaction pooler: it is a startup parameter)"},
	{Names: []string{"DATABASE_LISTEN_URL"}, Default: "`DATABASE_URL`", Text: "a direct `postgres://` connection to the same server for the one `LISTEN` connection of the wake-ups, when `DATABASE_URL` goes through a transaction pooler"},
	{Names: []string{"SWITCHBOARD_ADDR"}, Default: "`:8080`", Text: "HTTP listen address"},
	{Names: []string{"SWITCHBOARD_WORK_RETENTION"}, Default: "`168h` (7 days)", Text: "how long finished work items (turns, deliveries, fires) are kept before the sweep deletes them; at least `1h`. The sweep deletes in batches until none is left (at most 10 s a sweep, once a minute), so the table stays bounded at any rate the store can write"},
	{Names: []string{"SWITCHBOARD_CONFIG"}, Default: "`./switchboard.yaml` when present", Text: "the agents file (every field: [the `switchboard.yaml` reference](config.md)); the default file is watched from the start, so one created later is loaded by the next reload"},
	{Names: []string{"SWITCHBOARD_MODEL"}, Default: "an available provider, else `scripted:demo`", Text: "model of every agent that declares none: `anthropic:claude-sonnet-4-5`, `openai:gpt-4.1-mini`, `claude-code:sonnet`, `codex:default` (see [CLI backends](../agents.md#cli-backends-claude-code-and-codex)), `scripted:path/to/script.yaml`"},
	{Names: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, Default: "", Text: "Anthropic Messages API"},
	{Names: []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}, Default: "", Text: "OpenAI Chat Completions, or any compatible server (Ollama, vLLM, LM Studio: set the base URL, e.g. `http://localhost:11434/v1`)"},
	{Names: []string{"SWITCHBOARD_API_TOKEN"}, Default: "empty: the API and `/metrics` answer direct loopback callers only (no proxy header; see [HTTP API](../api.md#http-api))", Text: "bearer token for `/api/…` and `/metrics`"},
	{Names: []string{"SWITCHBOARD_ALLOWED_ORIGINS"}, Default: "empty: no other site", Text: "comma-separated browser origins (`https://app.example.com`) whose pages may call the API, with CORS; a malformed origin stops the start with an error naming the variable"},
	{Names: []string{"SWITCHBOARD_CONCURRENCY"}, Default: "`8`", Text: "deliveries, commands and scheduled fires run at once by this instance"},
	{Names: []string{"SWITCHBOARD_TURN_CONCURRENCY"}, Default: "`64`", Text: "turns run at once by this instance, in slots of their own: a turn mostly waits on its model, and nothing else queues behind long turns"},
	{Names: []string{"SWITCHBOARD_MODEL_IDLE_TIMEOUT"}, Default: "`60s`", Text: "a model stream that sends nothing for this long (a Go duration: `90s`, `2m`) counts as a dropped connection and is retried"},
	{Names: []string{"SWITCHBOARD_MODEL_TIMEOUT"}, Default: "`10m`", Text: "the longest one model call may take, its retries included, on every backend (the CLIs too: raise it for long coding tasks); at the deadline the turn ends with one message (\"The model took longer than 10m0s to answer; stopped.\") and lets go of the conversation. A Go duration; anything else stops the start naming the variable"},
	{Names: []string{"SWITCHBOARD_MAX_REPLY_BYTES"}, Default: "`262144` (256 KB)", Text: "the most one model call may stream (text, reasoning and tool arguments together, at least `1024`): past it the call is cancelled and the reply ends with \"… [reply cut: longer than 256 KB]\""},
	{Names: []string{"SWITCHBOARD_LEASE_TTL"}, Default: "`15s`", Text: "how long a turn's lease outlives its last heartbeat; another instance takes over a dead one's turns after it"},
	{Names: []string{"SWITCHBOARD_SHUTDOWN_TIMEOUT"}, Default: "`10s`", Text: "on SIGTERM or SIGINT, how long running turns may finish before they are cut off and released to the next instance"},
	{Names: []string{"SWITCHBOARD_SECRET_KEY"}, Default: "empty: no secret can be stored", Text: "keys that seal stored tokens (AES-256-GCM): `ID:BASE64` of 32 bytes, comma-separated, the first seals (see [secrets at rest](../access.md#slack-across-workspaces-secrets-at-rest))"},
	{Names: []string{"SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SWITCHBOARD_PUBLIC_URL"}, Default: "empty: one workspace, `SLACK_BOT_TOKEN`", Text: "the Slack install flow for many workspaces (see [Slack across workspaces](../access.md#slack-across-workspaces-secrets-at-rest))"},
	{Names: []string{"SLACK_TOKEN_REFRESH_MARGIN"}, Default: "`2h`", Text: "with token rotation on in the Slack app, how long before its expiry an installed workspace's bot token is renewed (by one instance; see [Token rotation](../slack.md#token-rotation)). A Go duration between `1s` and `11h`"},
	{Names: []string{"SWITCHBOARD_SESSION_TTL"}, Default: "`15m`", Text: "how long an API session exchanged from an agent key lives"},
	{Names: []string{"SWITCHBOARD_PUBLIC_URL"}, Qualifier: "(console)", Default: "`http://localhost:PORT` of the listener", Text: "where the web console's sign-in links point (see [The web console](../api.md#the-web-console))"},
	{Names: []string{"SWITCHBOARD_OIDC_ISSUER", "SWITCHBOARD_OIDC_CLIENT_ID", "SWITCHBOARD_OIDC_CLIENT_SECRET"}, Default: "empty: no single sign-on", Text: "single sign-on to the console and the API with an OpenID Connect provider: its issuer URL (discovery at `ISSUER/.well-known/openid-configuration`), and the client this app is registered as, with the redirect URI `SWITCHBOARD_PUBLIC_URL/auth/oidc/callback`; groups map to workspace roles in `sso:` of `switchboard.yaml` (see [Single sign-on](../access.md#single-sign-on-oidc))"},
	{Names: []string{"SWITCHBOARD_PROFILE_TTL"}, Default: "`24h`", Text: "how long a person's name and time zone, read from Slack or Discord, are cached"},
	{Names: []string{"SWITCHBOARD_INSTANCE_ID"}, Default: "host name plus a hash of the database", Text: "this instance's name in leases. Keep it stable across restarts (a restart then takes its own leases back at once) and unique among running instances: two `serve` processes on one host against one database must each set it. A process holds its id while it runs: a second `serve` under a live id refuses to start, and `switchboard chat` runs under an id of its own (see [One process per instance id](../production.md#one-process-per-instance-id))"},
	{Names: []string{"GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET"}, Default: "empty: no connections", Text: "the OAuth apps people and workspaces connect their GitHub and Google accounts with; each turns on its provider's tools (see [Connections](../connections.md#connections-github-and-google))"},
	{Names: []string{"SWITCHBOARD_GITHUB_OAUTH_URL", "SWITCHBOARD_GITHUB_API_URL", "SWITCHBOARD_GOOGLE_OAUTH_URL", "SWITCHBOARD_GOOGLE_API_URL"}, Default: "the real endpoints", Text: "base URLs of the providers' OAuth and API endpoints: GitHub Enterprise Server, or local fakes in tests"},
	{Names: []string{"SWITCHBOARD_SKILLS_DIR"}, Default: "empty: only the skills the binary ships", Text: "a folder of platform skills, one sub-folder per skill, offered to every agent (see [Skills](../agents.md#skills))"},
	{Names: []string{"SWITCHBOARD_MCP_CONFIG"}, Default: "`./mcp-servers.json` when present", Text: "the outside MCP servers whose tools agents get (see [MCP](../mcp.md#mcp-tools-from-outside-agents-as-tools)); a file named here must exist"},
	{Names: []string{"SWITCHBOARD_DATA_DIR"}, Default: "`./data`", Text: "where the CLI backends' working directories are (`agents/NAME/work`; see [CLI backends](../agents.md#cli-backends-claude-code-and-codex))"},
	{Names: []string{"SWITCHBOARD_CLAUDE_CODE_PATH", "SWITCHBOARD_CODEX_PATH"}, Default: "`claude`, `codex` on `PATH`", Text: "the CLI programs"},
	{Names: []string{"SWITCHBOARD_CLAUDE_CODE_ARGS", "SWITCHBOARD_CODEX_ARGS"}, Default: "`--permission-mode acceptEdits`; `-c sandbox_mode=\"workspace-write\"`", Text: "extra arguments, split at spaces (`none` for none), e.g. `--allowedTools Bash(npm test)`"},
	{Names: []string{"SWITCHBOARD_CLI_ENV"}, Default: "empty", Text: "comma-separated names of more variables the CLIs get (`GITHUB_TOKEN,NPM_TOKEN`)"},
	{Names: []string{"SWITCHBOARD_CLI_IDLE_TIMEOUT"}, Default: "`10m`", Text: "a CLI printing nothing for this long is killed as hung (it prints nothing while one of its tools runs)"},
	{Names: []string{"SWITCHBOARD_CLI_MCP_URL"}, Default: "`http://127.0.0.1:PORT/mcp` from `SWITCHBOARD_ADDR`", Text: "where the CLIs reach `/mcp`; `off` for native tools only"},
	{Names: []string{"SWITCHBOARD_CLI_MCP_TOKEN"}, Default: "`SWITCHBOARD_API_TOKEN`", Text: "the bearer token the CLIs present at `/mcp`"},
	{Names: []string{"SWITCHBOARD_MEMORY_BUDGET"}, Default: "`memory.budget` in `switchboard.yaml`, else `200ms`", Text: "how long a turn waits for its background memory (1ms to 10s; see [Memory](../agents.md#memory))"},
	{Names: []string{"SWITCHBOARD_RELOAD_POLL"}, Default: "`2s`", Text: "how often `switchboard.yaml` and `mcp-servers.json` are checked for a change, which reloads them (`off`: only SIGHUP reloads; see [Reloading the configuration](../agents.md#reloading-the-configuration))"},
	{Names: []string{"SWITCHBOARD_PG_DUMP_PATH", "SWITCHBOARD_PG_RESTORE_PATH"}, Default: "`pg_dump`, `pg_restore` on `PATH`", Text: "the PostgreSQL client programs `switchboard backup` and `restore` run for a Postgres store, of the server's major version or newer (flags `-pg-dump`, `-pg-restore`; see [Backups and restore](../production.md#backups-and-restore))"},
	{Names: []string{"SWITCHBOARD_LOG_LEVEL"}, Default: "`info`", Text: "`debug`, `info`, `warn`, `error`"},
	{Names: []string{"SWITCHBOARD_LOG_FORMAT"}, Default: "`text`", Text: "`text` or `json` (one JSON object a line, with `trace_id` and `span_id` inside a traced turn); see [Observability](../operate.md#observability)"},
	{Names: []string{"SWITCHBOARD_ADMIN_ADDR"}, Default: "empty: off", Text: "address of a second listener serving pprof (`/debug/pprof/`), without authentication: bind it to loopback or a private network"},
	{Names: []string{"OTEL_EXPORTER_OTLP_ENDPOINT"}, Prefix: "OTEL_", Default: "empty: no traces, no cost", Text: "export traces over OTLP/HTTP, e.g. `http://otel-collector:4318`; the other standard `OTEL_*` variables apply (see [Observability](../operate.md#observability))"},
	{Names: []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL"}, Default: "", Text: "Slack (below)"},
	{Names: []string{"DISCORD_BOT_TOKEN", "DISCORD_PUBLIC_KEY", "DISCORD_API_URL"}, Default: "", Text: "Discord (below)"},
	{Names: []string{"TELEGRAM_BOT_TOKEN"}, Default: "empty: Telegram off", Text: "the bot token BotFather gives (`123456789:AA…`); turns Telegram on, receiving updates by long polling (one instance at a time; see [Telegram](../telegram.md))"},
	{Names: []string{"TELEGRAM_WEBHOOK_SECRET"}, Default: "empty: long polling", Text: "receive updates by webhook at `SWITCHBOARD_PUBLIC_URL/telegram/webhook` instead (an https address), registered with this secret token (16 to 256 of `A-Z a-z 0-9 _ -`), which every update must carry"},
	{Names: []string{"TELEGRAM_API_URL"}, Default: "`https://api.telegram.org`", Text: "the Bot API server: a local Bot API server, or a fake in tests"},
	{Names: []string{"DISCORD_APPLICATION_ID"}, Default: "empty: the id the gateway reports at connect", Text: "the Discord application's id, for the slash commands and interactions"},
	{Names: []string{"DISCORD_COMMAND_GUILD_ID"}, Default: "empty: `discord.command_guild_id`, else global", Text: "register the slash commands in one guild (instant, for development); over the YAML setting"},
	{Names: []string{"MATRIX_HOMESERVER_URL", "MATRIX_USER_ID", "MATRIX_ACCESS_TOKEN"}, Default: "empty: Matrix off", Text: "the Matrix bot account: the homeserver's base URL, the bot's full user id and its access token, all three together (see [Matrix](../matrix.md))"},
}

// Documented reports whether Settings documents the variable name.
func Documented(name string) bool {
	for _, s := range Settings {
		if slices.Contains(s.Names, name) || (s.Prefix != "" && len(name) > len(s.Prefix) && name[:len(s.Prefix)] == s.Prefix) {
			return true
		}
	}
	return false
}
