// Package mcpclient connects Switchboard to outside MCP servers and offers
// their tools to agents as if they were built in.
//
// The servers come from mcp-servers.json, in the mcpServers shape Claude
// Desktop, Claude Code and Cursor read (command/args/env for a server run
// as a child process over stdio, url/headers for one reached over
// streamable HTTP), with three optional fields of Switchboard's own: risk,
// agents and workspace. Each tool of a server is registered in the tool
// registry as server__tool, with the server's input schema and the declared
// risk (high unless the file says otherwise), so every call passes the same
// guard, approvals and audit as a built-in tool.
//
// A Manager keeps one session per server: it connects, initialises and
// lists the tools at Start, refreshes them on notifications/tools/list_changed,
// and when a session ends it marks the server disconnected, withdraws its
// tools from the registry and reconnects with backoff.
package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/tool"
)

// DefaultConfigPath is where the servers are read from when
// SWITCHBOARD_MCP_CONFIG is not set.
const DefaultConfigPath = "mcp-servers.json"

// Transport says how a server is reached.
type Transport string

const (
	TransportStdio Transport = "stdio" // a child process speaking over stdin/stdout
	TransportHTTP  Transport = "http"  // streamable HTTP
)

// Config is mcp-servers.json.
type Config struct {
	Servers map[string]*Server `json:"mcpServers"`
}

// Server is one entry of mcpServers.
type Server struct {
	// Name is the key of the entry; it prefixes the server's tool names.
	Name string `json:"-"`
	// Type is optional: "stdio", or "http" / "streamable-http"; without it
	// the transport follows from command or url.
	Type string `json:"type,omitempty"`

	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`

	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth, when present, reaches the server with OAuth access tokens
	// ("oauth": {} for discovery and dynamic registration).
	OAuth *OAuth `json:"oauth,omitempty"`
	// Elicitation is how the server's elicitation requests are answered:
	// "decline" (the default: nobody is there to ask) or "defaults"
	// (accept with the defaults the server's form declares).
	Elicitation string `json:"elicitation,omitempty"`

	// Risk is the declared risk of the server's tools: a default and per
	// tool. Unset: every tool is high, so a person confirms each call until
	// the operator says otherwise.
	Risk Risk `json:"risk,omitzero"`
	// Agents, when set, are the only agents offered the server's tools.
	Agents []string `json:"agents,omitempty"`
	// Workspace, when set, limits the tools to conversations of that
	// workspace (a Slack team or Discord guild id, or a Switchboard
	// workspace id).
	Workspace string `json:"workspace,omitempty"`
	// Timeout bounds one tool call ("30s"); default 60s.
	Timeout Duration `json:"timeout,omitzero"`
	// Disabled keeps the entry in the file without connecting.
	Disabled bool `json:"disabled,omitempty"`

	// rawURL is the url as written when it names a variable, for
	// messages: the expanded value may hold a secret.
	rawURL string
}

// Risk is a server's declared risk: "risk": "low" sets the default, and
// "risk": {"default": "medium", "tools": {"echo": "low"}} sets it per tool
// (by the server's own tool name).
type Risk struct {
	Default tool.Risk            `json:"default,omitempty"`
	Tools   map[string]tool.Risk `json:"tools,omitempty"`
}

// UnmarshalJSON takes a plain risk string or the object form.
func (r *Risk) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = Risk{Default: tool.Risk(s)}
		return nil
	}
	type plain Risk
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("want a risk (low, medium, high) or {\"default\": ..., \"tools\": {...}}: %w", err)
	}
	*r = Risk(p)
	return nil
}

// For is the risk of the server's tool name.
func (r Risk) For(name string) tool.Risk {
	if v, ok := r.Tools[name]; ok {
		return v
	}
	if r.Default != "" {
		return r.Default
	}
	return tool.RiskHigh
}

// Duration is a time.Duration written as "30s".
type Duration time.Duration

// UnmarshalJSON parses a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("%q is not a positive duration such as \"30s\"", s)
	}
	*d = Duration(v)
	return nil
}

// Transport is how the server is reached.
func (s *Server) Transport() Transport {
	if s.URL != "" || s.Type == "http" || s.Type == "streamable-http" {
		return TransportHTTP
	}
	return TransportStdio
}

// ToolName is the registry name of the server's tool: server__tool.
func (s *Server) ToolName(remote string) string { return s.Name + "__" + remote }

// audience is who is offered the server's tools.
func (s *Server) audience() tool.Audience {
	a := tool.Audience{Agents: slices.Clone(s.Agents)}
	if s.Workspace != "" {
		a.Workspaces = []string{s.Workspace}
	}
	return a
}

// serverName is what a server key must look like: it becomes the prefix of
// tool names, which the model providers limit to [a-zA-Z0-9_-].
var serverName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,32}$`)

// Load reads the file at path. A missing file at the default path (explicit
// false) means no servers; a missing file the operator named is an error,
// as is a file that does not parse or validate (naming the server and the
// field). getenv expands ${VAR} in env values, args, the url and headers,
// so tokens stay out of the file.
func Load(path string, explicit bool, getenv func(string) string) (*Config, error) {
	if path == "" {
		path = DefaultConfigPath
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading MCP servers (SWITCHBOARD_MCP_CONFIG): %w", err)
	}
	c, err := Parse(b, getenv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates mcp-servers.json.
func Parse(b []byte, getenv func(string) string) (*Config, error) {
	var raw struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	c := &Config{Servers: map[string]*Server{}}
	for name, body := range raw.Servers {
		var s Server
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("mcpServers.%s: %w", name, err)
		}
		s.Name = name
		// Expanded first, so that a url read from a variable is checked
		// as the server will be reached.
		if err := s.expand(getenv); err != nil {
			return nil, fmt.Errorf("mcpServers.%s.%w", name, err)
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("mcpServers.%s.%w", name, err)
		}
		c.Servers[name] = &s
	}
	return c, nil
}

// fieldError names the field of a server that is wrong; Parse prefixes the
// server.
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func (s *Server) validate() error {
	bad := func(field, format string, args ...any) error {
		return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
	}
	if !serverName.MatchString(s.Name) {
		return bad("name", "%q must be 1 to 32 letters, digits or '-': it prefixes the tool names", s.Name)
	}
	switch s.Type {
	case "", "stdio", "http", "streamable-http":
	default:
		return bad("type", "%q must be stdio, http or streamable-http (SSE-only servers are not supported)", s.Type)
	}
	switch {
	case s.Command != "" && s.URL != "":
		return bad("url", "a server has either command (stdio) or url (streamable HTTP), not both")
	case s.Transport() == TransportStdio && s.Command == "":
		return bad("command", "is required for a stdio server (or give url for streamable HTTP)")
	case s.Transport() == TransportHTTP && s.URL == "":
		return bad("url", "is required for an http server")
	case s.Transport() == TransportHTTP:
		u, err := url.Parse(s.URL)
		if s.Disabled && s.rawURL != "" {
			break // its variables were not read: it is not reached
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			shown := s.URL
			if s.rawURL != "" {
				shown = s.rawURL // never the value of a variable
			}
			return bad("url", "%q must be an http or https URL", shown)
		}
	}
	if s.Transport() == TransportStdio && len(s.Headers) > 0 {
		return bad("headers", "only apply to an http server")
	}
	if s.OAuth != nil && s.Transport() != TransportHTTP {
		return bad("oauth", "only applies to an http server")
	}
	for k := range s.Headers {
		if s.OAuth != nil && strings.EqualFold(k, "Authorization") {
			return bad("headers.Authorization", "a server with oauth gets its Authorization header from the OAuth token; remove one of them")
		}
	}
	if s.OAuth != nil && s.OAuth.ClientSecret != "" && s.OAuth.ClientID == "" {
		return bad("oauth.client_secret", "needs oauth.client_id")
	}
	switch s.Elicitation {
	case "", ElicitDecline, ElicitDefaults:
	default:
		return bad("elicitation", "%q must be decline or defaults", s.Elicitation)
	}
	if s.Transport() == TransportHTTP && (len(s.Args) > 0 || len(s.Env) > 0) {
		return bad("args", "args and env only apply to a stdio server")
	}
	if s.Risk.Default != "" && !validRisk(s.Risk.Default) {
		return bad("risk.default", "%q must be one of low, medium, high", s.Risk.Default)
	}
	for _, name := range sortedKeys(s.Risk.Tools) {
		if !validRisk(s.Risk.Tools[name]) {
			return bad("risk.tools."+name, "%q must be one of low, medium, high", s.Risk.Tools[name])
		}
	}
	for i, a := range s.Agents {
		if strings.TrimSpace(a) == "" {
			return bad(fmt.Sprintf("agents[%d]", i), "is empty")
		}
	}
	return nil
}

func validRisk(r tool.Risk) bool {
	return r == tool.RiskLow || r == tool.RiskMedium || r == tool.RiskHigh
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// expand replaces ${VAR} (and $VAR) in env values, args, the url, the
// headers and the oauth client with the service's environment. A variable
// that is not set (or is empty) is an error naming the field and the
// variable, so a server never starts with a blank token or a broken url. A
// disabled entry is not reached: its variables are not read.
func (s *Server) expand(getenv func(string) string) error {
	if s.URL != "" && strings.Contains(s.URL, "$") {
		s.rawURL = s.URL
	}
	if getenv == nil || s.Disabled {
		return nil
	}
	var err error
	ex := func(field, v string) string {
		return os.Expand(v, func(name string) string {
			val := getenv(name)
			if val == "" && err == nil {
				err = &fieldError{field: field, msg: fmt.Sprintf("${%s} is not set (or is empty) in the service's environment", name)}
			}
			return val
		})
	}
	for _, k := range sortedKeys(s.Env) {
		s.Env[k] = ex("env."+k, s.Env[k])
	}
	for i, a := range s.Args {
		s.Args[i] = ex(fmt.Sprintf("args[%d]", i), a)
	}
	s.URL = ex("url", s.URL)
	for _, k := range sortedKeys(s.Headers) {
		s.Headers[k] = ex("headers."+k, s.Headers[k])
	}
	if s.OAuth != nil {
		s.OAuth.ClientID = ex("oauth.client_id", s.OAuth.ClientID)
		s.OAuth.ClientSecret = ex("oauth.client_secret", s.OAuth.ClientSecret)
	}
	return err
}

// secretName is an env variable name that holds a credential.
var secretName = regexp.MustCompile(`(?i)(token|secret|key|password|passwd|auth|credential)`)

// Secrets are the header values and the env values whose names say they
// are credentials (tokens, once expanded), for redaction from logs and
// messages. Other env values (NODE_ENV=production) are not secrets and
// redacting them would blank ordinary words.
func (c *Config) Secrets() []string {
	var out []string
	for _, s := range c.Servers {
		for k, v := range s.Env {
			if secretName.MatchString(k) {
				out = append(out, v)
			}
		}
		for _, v := range s.Headers {
			out = append(out, v)
		}
		if s.OAuth != nil && s.OAuth.ClientSecret != "" {
			out = append(out, s.OAuth.ClientSecret)
		}
	}
	return out
}

// Names lists the servers, sorted.
func (c *Config) Names() []string { return sortedKeys(c.Servers) }
