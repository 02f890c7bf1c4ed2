package mcpclient

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/childenv"
	"github.com/switchboardhq/switchboard/internal/mcptest"
)

// TestStdioServerGetsOnlyItsEnv: a stdio server started with the service's
// secrets and settings in its environment sees none of them through
// server-everything's get-env, only the base environment and what its own
// block gave it (a literal and a ${VAR} read from the service).
func TestStdioServerGetsOnlyItsEnv(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-everything")
	secrets := map[string]string{
		"ANTHROPIC_API_KEY":      "sk-ant-leak-1",
		"OPENAI_API_KEY":         "sk-openai-leak-2",
		"DATABASE_URL":           "postgres://sb:leak-3@127.0.0.1:5432/sb",
		"SWITCHBOARD_SECRET_KEY": "leak-4-secret-key",
		"SWITCHBOARD_API_TOKEN":  "leak-5-api-token",
		"SLACK_BOT_TOKEN":        "xoxb-leak-6",
		"SLACK_SIGNING_SECRET":   "leak-7-signing",
		"DISCORD_BOT_TOKEN":      "leak-8-discord",
		"SWITCHBOARD_XYZ":        "leak-9-setting",
		"GITHUB_MCP_TOKEN":       "leak-10-not-named-by-the-block",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("EVERYTHING_TOKEN", "given-through-expansion")
	t.Setenv("LANG", "C.UTF-8")
	c, err := Parse([]byte(`{"mcpServers": {"everything": {"command": `+jsonString(bin)+`, "args": ["stdio"],
		"env": {"GIVEN": "a literal value", "EVERYTHING_KEY": "${EVERYTHING_TOKEN}"}, "risk": "low"}}}`), os.Getenv)
	require.NoError(t, err)
	_, reg := start(t, c.Servers, nil)

	res := call(t, reg, "everything__get-env", `{}`)
	require.False(t, res.IsError, "%s", res.Output)
	var out Output
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.NotEmpty(t, out.Content)
	var env map[string]string
	require.NoError(t, json.Unmarshal([]byte(out.Content[0].Text), &env), "get-env answers the process's environment as JSON: %s", out.Content[0].Text)

	for k, v := range secrets {
		require.NotContains(t, env, k, "the service's %s reached the tool server", k)
		require.NotContains(t, out.Content[0].Text, v, "the value of the service's %s reached the tool server", k)
	}
	require.NotContains(t, env, "EVERYTHING_TOKEN", "a variable the block expands is not passed under its own name")
	require.Equal(t, "a literal value", env["GIVEN"], "the block's env entries are given")
	require.Equal(t, "given-through-expansion", env["EVERYTHING_KEY"], "${VAR} in env is read from the service's environment")
	require.Equal(t, os.Getenv("PATH"), env["PATH"], "the server finds its programs")
	require.Equal(t, "C.UTF-8", env["LANG"], "the locale is passed")
	for k := range env {
		require.True(t, k == "GIVEN" || k == "EVERYTHING_KEY" || slices.Contains(childenv.Base, k),
			"%s=%q is neither in the base environment nor given by the block", k, env[k])
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestExpandURLAndHeaders: ${VAR} works in url and headers (it is expanded
// before the url is checked), and a variable that is not set stops the
// load naming the server, the field and the variable.
func TestExpandURLAndHeaders(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		return map[string]string{"MCP_URL": "https://mcp.example.com/mcp", "MCP_HOST": "mcp.example.com", "TOKEN": "tok-1"}[k]
	}
	c, err := Parse([]byte(`{"mcpServers": {
		"whole": {"url": "${MCP_URL}", "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"part": {"type": "http", "url": "https://${MCP_HOST}/mcp"}}}`), env)
	require.NoError(t, err)
	require.Equal(t, "https://mcp.example.com/mcp", c.Servers["whole"].URL)
	require.Equal(t, TransportHTTP, c.Servers["whole"].Transport())
	require.Equal(t, "Bearer tok-1", c.Servers["whole"].Headers["Authorization"])
	require.Equal(t, "https://mcp.example.com/mcp", c.Servers["part"].URL)

	for _, tc := range []struct{ name, body, want string }{
		{"unset in url", `{"mcpServers": {"gh": {"url": "${NOPE_URL}"}}}`, "mcpServers.gh.url: ${NOPE_URL} is not set"},
		{"unset in a header", `{"mcpServers": {"gh": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${NOPE_TOKEN}"}}}}`,
			"mcpServers.gh.headers.Authorization: ${NOPE_TOKEN} is not set"},
		{"unset in env", `{"mcpServers": {"fs": {"command": "x", "env": {"KEY": "$NOPE_KEY"}}}}`, "mcpServers.fs.env.KEY: ${NOPE_KEY} is not set"},
		{"unset in args", `{"mcpServers": {"fs": {"command": "x", "args": ["--root", "${NOPE_DIR}"]}}}`, "mcpServers.fs.args[1]: ${NOPE_DIR} is not set"},
		{"expanded url still checked", `{"mcpServers": {"gh": {"url": "ftp://${MCP_HOST}"}}}`, "mcpServers.gh.url: \"ftp://${MCP_HOST}\" must be an http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body), env)
			require.ErrorContains(t, err, tc.want)
		})
	}

	// A disabled entry may name a variable that is not set.
	c, err = Parse([]byte(`{"mcpServers": {"off": {"url": "${NOPE_URL}", "disabled": true}}}`), env)
	require.NoError(t, err)
	require.True(t, c.Servers["off"].Disabled)
	_ = tool.RiskLow
}
