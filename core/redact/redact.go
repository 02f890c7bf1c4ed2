// Package redact removes secrets from text before it is logged, stored or
// shown: provider API keys, bearer tokens, Slack and Discord tokens, passwords
// in URLs and secret-looking query parameters.
//
// It is a sink every error from a model backend passes through. Providers
// echo parts of a request back in their error bodies (an invalid key, a URL
// with credentials), and those errors end up in logs, in the conversation log
// and in chat messages, where a leaked key is hard to take back.
//
// Redaction keeps the kind of secret visible ("sk-ant-REDACTED",
// "Bearer REDACTED") so a reader can still tell which credential was wrong.
package redact

import (
	"regexp"
)

// Marker replaces the secret part of a match.
const Marker = "REDACTED"

type rule struct {
	re   *regexp.Regexp
	repl string
}

// rules run in order. Specific key shapes come before the generic header and
// parameter rules so that "Bearer sk-ant-..." is reported as a bearer token
// with the key removed either way. Every replacement is a fixed point: running
// String twice gives the same text.
var rules = []rule{
	// Passwords in URLs: scheme://user:pass@host -> scheme://user:REDACTED@host.
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]*):[^@\s/]+@`), "${1}:" + Marker + "@"},
	// Anthropic keys: sk-ant-api03-..., sk-ant-admin01-...
	{regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{8,}`), "sk-ant-" + Marker},
	// OpenAI keys: sk-..., sk-proj-..., sk-svcacct-..., sk-admin-...
	{regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{16,}`), "sk-" + Marker},
	// Slack tokens: xoxb-, xoxp-, xoxa-, xoxe-, xoxr-, xoxs-, xoxe.xoxp-, xapp-.
	{regexp.MustCompile(`\b(xox[abeoprs](?:\.xox[a-z])?|xapp)-[A-Za-z0-9\-]{6,}`), "${1}-" + Marker},
	// JSON Web Tokens (often carried as bearer tokens or in URLs).
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+`), Marker},
	// Google API keys and AWS access key ids.
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), "AIza" + Marker},
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), "AKIA" + Marker},
	// Authorization header values of any scheme: "Authorization: Bot x",
	// "authorization=Basic x".
	{regexp.MustCompile(`(?i)\b(authorization"?\s*[:=]\s*"?)(bearer|basic|bot|token)\s+[^\s",;]+`), "${1}${2} " + Marker},
	// Bearer tokens anywhere else: "Bearer x".
	{regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*`), "${1} " + Marker},
	// Discord bot tokens after "Bot ": the three dot-separated parts.
	{regexp.MustCompile(`\b(Bot)\s+[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{20,}`), "${1} " + Marker},
	// Discord tokens on their own: base64 user id, timestamp, HMAC.
	{regexp.MustCompile(`\b[A-Za-z0-9_\-]{23,30}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,45}\b`), Marker},
	// Key headers echoed back: "x-api-key: x", "api-key: x".
	{regexp.MustCompile(`(?i)\b((?:x-)?api-key"?\s*:\s*"?)[^\s",;]+`), "${1}" + Marker},
	// Secret query or form parameters: api_key=x, token=x, access_token=x, ...
	{regexp.MustCompile(`(?i)\b((?:api[_\-]?key|apikey|access[_\-]?token|refresh[_\-]?token|id[_\-]?token|auth[_\-]?token|token|client[_\-]?secret|secret|password|passwd|sig|signature)=)[^&\s#"',;]+`), "${1}" + Marker},
	// The same names as JSON fields: "api_key": "x".
	{regexp.MustCompile(`(?i)("(?:api[_\-]?key|apikey|access[_\-]?token|refresh[_\-]?token|auth[_\-]?token|token|client[_\-]?secret|secret|password)"\s*:\s*")[^"]+"`), "${1}" + Marker + `"`},
}

// String returns s with every recognised secret replaced. Text without
// secrets is returned unchanged.
func String(s string) string {
	for _, r := range rules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// Error returns err with its message redacted. The original error stays in
// the chain, so errors.Is and errors.As still find it; only the text is
// cleaned. A nil error stays nil, and an error with nothing to redact is
// returned as it is.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := String(msg)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// redactedError carries the cleaned message of an error it wraps.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
