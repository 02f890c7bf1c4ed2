package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/mcptest"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	env := func(k string) string { return map[string]string{"TOKEN": "s3cret-token-value"}[k] }
	good := `{"mcpServers": {
		"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"KEY": "${TOKEN}"},
			"risk": {"default": "medium", "tools": {"echo": "low"}}, "agents": ["assistant"]},
		"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "risk": "low", "workspace": "T0123"}
	}}`
	c, err := Parse([]byte(good), env)
	require.NoError(t, err)
	require.Equal(t, []string{"everything", "remote"}, c.Names())
	ev := c.Servers["everything"]
	require.Equal(t, TransportStdio, ev.Transport())
	require.Equal(t, tool.RiskLow, ev.Risk.For("echo"), "a per-tool risk wins")
	require.Equal(t, tool.RiskMedium, ev.Risk.For("add"), "the server's default applies to other tools")
	require.Equal(t, "s3cret-token-value", ev.Env["KEY"], "${VAR} is expanded from the environment")
	rm := c.Servers["remote"]
	require.Equal(t, TransportHTTP, rm.Transport())
	require.Equal(t, tool.RiskLow, rm.Risk.For("anything"))
	require.Equal(t, "Bearer s3cret-token-value", rm.Headers["Authorization"])
	require.Contains(t, c.Secrets(), "Bearer s3cret-token-value")
	require.Contains(t, c.Secrets(), "s3cret-token-value", "an env value named like a key is a secret")
	require.Equal(t, tool.RiskHigh, (&Server{}).Risk.For("x"), "without a declared risk every tool is high")

	for _, tc := range []struct{ name, body, want string }{
		{"not json", `{`, "not valid JSON"},
		{"no command or url", `{"mcpServers": {"a": {}}}`, "mcpServers.a.command: is required"},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}`, "mcpServers.a.url: a server has either"},
		{"bad url", `{"mcpServers": {"a": {"url": "ftp://h"}}}`, "mcpServers.a.url: \"ftp://h\" must be an http or https URL"},
		{"bad risk", `{"mcpServers": {"a": {"command": "x", "risk": "extreme"}}}`, "mcpServers.a.risk.default: \"extreme\" must be one of"},
		{"bad tool risk", `{"mcpServers": {"a": {"command": "x", "risk": {"tools": {"rm": "yes"}}}}}`, "mcpServers.a.risk.tools.rm"},
		{"unknown field", `{"mcpServers": {"a": {"command": "x", "agent": ["a"]}}}`, "mcpServers.a: json: unknown field \"agent\""},
		{"bad name", `{"mcpServers": {"a_b": {"command": "x"}}}`, "mcpServers.a_b.name"},
		{"sse", `{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}`, "mcpServers.a.type"},
		{"bad timeout", `{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`, "mcpServers.a: \"soon\" is not a positive duration"},
		{"oauth on stdio", `{"mcpServers": {"a": {"command": "x", "oauth": {}}}}`, "mcpServers.a.oauth: only applies to an http server"},
		{"oauth and a static token", `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {}, "headers": {"authorization": "Bearer x"}}}}`, "mcpServers.a.headers.Authorization: a server with oauth"},
		{"oauth secret without id", `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {"client_secret": "s"}}}}`, "mcpServers.a.oauth.client_secret: needs oauth.client_id"},
		{"oauth unknown field", `{"mcpServers": {"a": {"url": "https://h/mcp", "oauth": {"scope": "x"}}}}`, "unknown field \"scope\""},
		{"bad elicitation", `{"mcpServers": {"a": {"command": "x", "elicitation": "accept"}}}`, "mcpServers.a.elicitation: \"accept\" must be decline or defaults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body), env)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := Load(filepath.Join(dir, "mcp-servers.json"), false, os.Getenv)
	require.NoError(t, err, "a missing default file means no servers")
	require.Empty(t, c.Servers)
	_, err = Load(filepath.Join(dir, "mcp-servers.json"), true, os.Getenv)
	require.ErrorContains(t, err, "SWITCHBOARD_MCP_CONFIG", "a file the operator named must exist")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {"gh": {"url": "nope"}}}`), 0o600))
	_, err = Load(bad, true, os.Getenv)
	require.ErrorContains(t, err, "mcpServers.gh.url")
}

// start builds and starts a manager over servers, stopped when the test ends.
func start(t *testing.T, servers map[string]*Server, tune func(*Options)) (*Manager, *tool.Registry) {
	t.Helper()
	for name, s := range servers {
		s.Name = name
		require.NoError(t, s.validate())
	}
	reg := tool.NewRegistry()
	o := Options{Config: &Config{Servers: servers}, Registry: reg, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		KeepAlive: time.Second, ConnectTimeout: 60 * time.Second}
	if tune != nil {
		tune(&o)
	}
	m, err := New(o)
	require.NoError(t, err)
	require.NoError(t, m.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, m.Stop(ctx))
	})
	return m, reg
}

func names(reg *tool.Registry) []string {
	var out []string
	for _, t := range reg.List() {
		out = append(out, t.Name())
	}
	return out
}

func call(t *testing.T, reg *tool.Registry, name, args string) tool.Result {
	t.Helper()
	tl, ok := reg.Get(name)
	require.True(t, ok, "tool %s registered; have %v", name, names(reg))
	return tl.Call(t.Context(), &tool.Request{Agent: "assistant"}, json.RawMessage(args))
}

// everythingChecks runs what both transports must do against
// server-everything.
func everythingChecks(t *testing.T, m *Manager, reg *tool.Registry) {
	st := m.Status()
	require.Len(t, st, 1)
	require.Equal(t, StateConnected, st[0].State, "status %+v", st[0])
	require.Contains(t, st[0].Tools, "everything__echo")
	require.Contains(t, st[0].Server, "everything")

	echo, ok := reg.Get("everything__echo")
	require.True(t, ok)
	require.Equal(t, tool.RiskLow, echo.Risk(), "the per-tool risk of the file")
	sum, ok := reg.Get("everything__get-sum")
	require.True(t, ok)
	require.Equal(t, tool.RiskHigh, sum.Risk(), "no declared risk: high")
	require.Contains(t, string(sum.Schema()), `"a"`, "the server's input schema is what the model sees")

	res := call(t, reg, "everything__echo", `{"message": "hello from switchboard"}`)
	require.False(t, res.IsError, "echo: %s", res.Output)
	require.Contains(t, string(res.Output), "Echo: hello from switchboard")

	res = call(t, reg, "everything__echo", `{}`)
	require.True(t, res.IsError, "the schema is checked before the server is called")
	require.Contains(t, string(res.Output), "message")

	res = call(t, reg, "everything__get-sum", `{"a": 2, "b": 40}`)
	require.False(t, res.IsError, "%s", res.Output)
	require.Contains(t, string(res.Output), "42")

	res = call(t, reg, "everything__get-tiny-image", `{}`)
	require.False(t, res.IsError, "%s", res.Output)
	require.Len(t, res.Attachments, 1, "the image becomes a file for the platform")
	require.Equal(t, "image/png", res.Attachments[0].MimeType)
	require.True(t, strings.HasPrefix(string(res.Attachments[0].Data), "\x89PNG"), "the attachment holds the decoded PNG")
	require.NotContains(t, string(res.Output), "iVBOR", "the model never sees the image's base64")
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	bin := mcptest.Bin(t, "mcp-server-everything")
	m, reg := start(t, map[string]*Server{"everything": {
		Command: bin, Args: []string{"stdio"}, Risk: Risk{Tools: map[string]tool.Risk{"echo": tool.RiskLow}},
		Timeout: Duration(2 * time.Second),
	}}, nil)
	everythingChecks(t, m, reg)

	t.Run("timeout reaches the server", func(t *testing.T) {
		res := call(t, reg, "everything__trigger-long-running-operation", `{"duration": 30, "steps": 30}`)
		require.True(t, res.IsError)
		require.Contains(t, string(res.Output), "did not answer trigger-long-running-operation within 2s")
		// The session survives a call cut off by its timeout.
		res = call(t, reg, "everything__echo", `{"message": "still here"}`)
		require.False(t, res.IsError, "%s", res.Output)
	})
	t.Run("a cancelled turn ends the call at once", func(t *testing.T) {
		tl, _ := reg.Get("everything__trigger-long-running-operation")
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		began := time.Now()
		res := tl.Call(ctx, &tool.Request{}, json.RawMessage(`{"duration": 30, "steps": 30}`))
		require.True(t, res.IsError)
		require.Less(t, time.Since(began), 2*time.Second, "the call ends with its context, not with the server's answer")
	})
	t.Run("output is capped", func(t *testing.T) {
		m2, reg2 := start(t, map[string]*Server{"big": {Command: bin, Args: []string{"stdio"}}}, func(o *Options) { o.MaxOutputBytes = 1024 })
		_ = m2
		long := strings.Repeat("x", 5000)
		res := call(t, reg2, "big__echo", fmt.Sprintf(`{"message": %q}`, long))
		require.False(t, res.IsError, "a long answer is cut, not failed: %.200s", res.Output)
		require.Less(t, len(res.Output), 1024+200)
		require.Contains(t, string(res.Output), `"truncated":true`)
	})
}

func TestEverythingHTTPKilledAndBack(t *testing.T) {
	t.Parallel()
	ev := mcptest.StartEverythingHTTP(t, 0)
	m, reg := start(t, map[string]*Server{"everything": {
		URL: ev.URL, Risk: Risk{Tools: map[string]tool.Risk{"echo": tool.RiskLow}},
	}}, nil)
	everythingChecks(t, m, reg)

	ev.Kill()
	require.Eventually(t, func() bool {
		st := m.Status()[0]
		return st.State == StateDisconnected && len(st.Tools) == 0
	}, 30*time.Second, 50*time.Millisecond, "a killed server is marked disconnected")
	require.False(t, slices.ContainsFunc(names(reg), func(n string) bool { return strings.HasPrefix(n, "everything__") }),
		"its tools are withdrawn from the registry: %v", names(reg))
	require.NotEmpty(t, m.Status()[0].Error, "the status says why")

	mcptest.StartEverythingHTTP(t, ev.Port)
	require.Eventually(t, func() bool { return m.Status()[0].State == StateConnected }, 60*time.Second, 50*time.Millisecond,
		"the server comes back with backoff")
	require.GreaterOrEqual(t, m.Status()[0].Connects, 2)
	res := call(t, reg, "everything__echo", `{"message": "back"}`)
	require.False(t, res.IsError, "%s", res.Output)
	require.Contains(t, string(res.Output), "Echo: back")
}

// TestToolListChanged uses the Go SDK's own server: a tool added while the
// session runs reaches the registry through notifications/tools/list_changed.
func TestToolListChanged(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	type in struct {
		Q string `json:"q"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "first", Description: "the first tool"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	m, reg := start(t, map[string]*Server{"fake": {URL: hs.URL, Agents: []string{"assistant"}}}, nil)
	require.Equal(t, []string{"fake__first"}, m.Status()[0].Tools)
	first, _ := reg.Get("fake__first")
	require.True(t, first.Audience().Allows("assistant", "", ""))
	require.False(t, first.Audience().Allows("other", "", ""), "agents limits who is offered the tools")

	mcp.AddTool(srv, &mcp.Tool{Name: "second", Description: "added later"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "two"}}}, nil, nil
	})
	require.Eventually(t, func() bool { _, ok := reg.Get("fake__second"); return ok }, 10*time.Second, 20*time.Millisecond,
		"list_changed refreshes the tools")
	res := call(t, reg, "fake__second", `{"q": "x"}`)
	require.False(t, res.IsError, "%s", res.Output)
	require.Contains(t, string(res.Output), "two")

	srv.RemoveTools("first")
	require.Eventually(t, func() bool { _, ok := reg.Get("fake__first"); return !ok }, 10*time.Second, 20*time.Millisecond,
		"a tool the server dropped is withdrawn")
}
