// Package redact removes secrets from text before it is logged, stored or
// shown: provider API keys, bearer tokens, Slack and Discord tokens, passwords
// in URLs and secret-looking query parameters.
//
// It is a sink every error from a model backend passes through. Providers
// echo parts of a request back in their error bodies (an invalid key, a URL
// with credentials), and those errors end up in logs, in the conversation log
// and in chat messages, where a leaked key is hard to take back.
//
// Two layers find secrets. The values the service is configured with (API
// keys, platform tokens, the database password) are registered once at start
// with AddSecrets and replaced wherever they appear, whatever their shape or
// length: a key that matches no known pattern, or a short test key, is still
// caught. Then patterns catch secrets by their shape, configured or not.
// Handler applies the same to every log record.
//
// Pattern redaction keeps the kind of secret visible ("sk-ant-REDACTED",
// "Bearer REDACTED") so a reader can still tell which credential was wrong;
// a configured value is replaced by the bare marker.
package redact

import (
	"regexp"
	"strings"
	"unicode"
)

// Marker replaces the secret part of a match.
const Marker = "REDACTED"

type rule struct {
	// hint is a cheap test that must pass before the regexp runs: most
	// text has no secret, and the literal checks skip nearly all of the
	// regexp work. lower is s in lower case.
	hint func(s, lower string) bool
	re   *regexp.Regexp
	repl string
	// fn, when set, replaces each match instead of repl.
	fn func(match string) string
}

// openaiKey replaces an sk- key, keeping masked echoes and what an earlier
// rule left ("sk-ant-REDACTED").
func openaiKey(m string) string {
	if strings.HasSuffix(m, "***") || m == "sk-ant-"+Marker {
		return m
	}
	return "sk-" + Marker
}

func has(subs ...string) func(s, lower string) bool {
	return func(s, _ string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
}

func hasFold(subs ...string) func(s, lower string) bool {
	return func(_, lower string) bool {
		for _, sub := range subs {
			if strings.Contains(lower, sub) {
				return true
			}
		}
		return false
	}
}

// hasLongDottedRun reports a run of at least 20 token characters followed by
// a dot: the start of a Discord token.
func hasLongDottedRun(s, _ string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			run++
		case c == '.' && run >= 20:
			return true
		default:
			run = 0
		}
	}
	return false
}

// rules run in order. Specific key shapes come before the generic header and
// parameter rules so that "Bearer sk-ant-..." is reported as a bearer token
// with the key removed either way. Every replacement is a fixed point: running
// String twice gives the same text.
var rules = []rule{
	// Anthropic keys: sk-ant-api03-..., sk-ant-admin01-..., of any length:
	// the prefix alone says what follows is a key.
	{hint: has("sk-ant-"), re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{3,}`), repl: "sk-ant-" + Marker},
	// OpenAI keys: sk-..., sk-proj-..., sk-svcacct-..., sk-admin-... Six
	// characters after "sk-" is enough to be a key ("sk-learn" is not);
	// OpenAI's own masked echo ("sk-abcdef****wxyz") is kept.
	{hint: has("sk-"), re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{6,}(?:\*{3,})?`), fn: openaiKey},
	// Slack tokens: xoxb-, xoxp-, xoxa-, xoxe-, xoxr-, xoxs-, xoxe.xoxp-, xapp-.
	{hint: has("xox", "xapp-"), re: regexp.MustCompile(`\b(xox[abeoprs](?:\.xox[a-z])?|xapp)-[A-Za-z0-9\-]{6,}`), repl: "${1}-" + Marker},
	// Switchboard's own API tokens (agent keys, sessions, personal and host
	// tokens): the public id before the secret stays, to say which one.
	{hint: has("sbk_", "sbs_", "sbp_", "sbh_"), re: regexp.MustCompile(`\b(sb[kpsh]_[0-9a-f]{16})_[A-Za-z0-9_\-]{20,}`), repl: "${1}_" + Marker},
	// JSON Web Tokens (often carried as bearer tokens or in URLs).
	{hint: has("eyJ"), re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+`), repl: Marker},
	// Google API keys and AWS access key ids.
	{hint: has("AIza"), re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), repl: "AIza" + Marker},
	{hint: has("AKIA", "ASIA"), re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), repl: "AKIA" + Marker},
	// Authorization header values of any scheme: "Authorization: Bot x",
	// "authorization=Basic x".
	{hint: hasFold("authorization"), re: regexp.MustCompile(`(?i)\b(authorization"?\s*[:=]\s*"?)(bearer|basic|bot|token)\s+[^\s",;]+`), repl: "${1}${2} " + Marker},
	// Bearer tokens anywhere else: "Bearer x".
	{hint: hasFold("bearer"), re: regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*`), repl: "${1} " + Marker},
	// Discord bot tokens after "Bot ": the three dot-separated parts.
	{hint: has("Bot"), re: regexp.MustCompile(`\b(Bot)\s+[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{20,}`), repl: "${1} " + Marker},
	// Discord tokens on their own: base64 user id, timestamp, HMAC.
	{hint: hasLongDottedRun, re: regexp.MustCompile(`\b[A-Za-z0-9_\-]{23,30}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,45}\b`), repl: Marker},
	// Key headers echoed back: "x-api-key: x", "api-key: x".
	{hint: hasFold("api-key:", "api-key :", `api-key":`, `api-key" :`), re: regexp.MustCompile(`(?i)\b((?:x-)?api-key"?\s*:\s*"?)[^\s",;]+`), repl: "${1}" + Marker},
	// Secret query or form parameters: api_key=x, token=x, access_token=x, ...
	{hint: hasFold("key=", "token=", "secret=", "password=", "passwd=", "sig=", "signature="), re: regexp.MustCompile(`(?i)\b((?:api[_\-]?key|apikey|access[_\-]?token|refresh[_\-]?token|id[_\-]?token|auth[_\-]?token|token|client[_\-]?secret|secret|password|passwd|sig|signature)=)[^&\s#"',;]+`), repl: "${1}" + Marker},
	// The same names as JSON fields: "api_key": "x".
	{hint: hasFold(`"api_key"`, `"api-key"`, `"apikey"`, `"access_token"`, `"access-token"`, `"accesstoken"`,
		`"refresh_token"`, `"refresh-token"`, `"refreshtoken"`, `"auth_token"`, `"auth-token"`, `"authtoken"`,
		`"token"`, `"client_secret"`, `"client-secret"`, `"clientsecret"`, `"secret"`, `"password"`), re: regexp.MustCompile(`(?i)("(?:api[_\-]?key|apikey|access[_\-]?token|refresh[_\-]?token|auth[_\-]?token|token|client[_\-]?secret|secret|password)"\s*:\s*")[^"]+"`), repl: "${1}" + Marker + `"`},
}

// patterns replaces every secret that the rules and urlPasswords recognise
// by its shape.
func patterns(s string) string {
	s = urlPasswords(s)
	lower := strings.ToLower(s)
	for _, r := range rules {
		if !r.hint(s, lower) {
			continue
		}
		var next string
		if r.fn != nil {
			next = r.re.ReplaceAllStringFunc(s, r.fn)
		} else {
			next = r.re.ReplaceAllString(s, r.repl)
		}
		if next != s {
			s = next
			lower = strings.ToLower(s)
		}
	}
	return s
}

// String returns s with every configured secret (see AddSecrets) and every
// recognised secret shape replaced, using the process-wide Redactor. Text
// without secrets is returned unchanged.
func String(s string) string { return std.String(s) }

// Error is String for an error's message, using the process-wide Redactor:
// see Redactor.Error.
func Error(err error) error { return std.Error(err) }

// redactedError carries the cleaned message of an error it wraps.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// urlPasswords replaces the password of every scheme://user:password@host
// in s: "postgres://app:s3cret@db/x" becomes "postgres://app:REDACTED@db/x".
// A scan, because the equivalent unanchored regexp costs tens of
// microseconds on every error message.
func urlPasswords(s string) string {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		auth := rest[i+3:]
		// The authority ends at the path, query, fragment or whitespace.
		end := strings.IndexFunc(auth, func(r rune) bool {
			return r == '/' || r == '?' || r == '#' || r == '"' || r == '\'' || unicode.IsSpace(r)
		})
		if end < 0 {
			end = len(auth)
		}
		at := strings.LastIndexByte(auth[:end], '@')
		colon := -1
		if at > 0 {
			colon = strings.IndexByte(auth[:at], ':')
		}
		if colon < 0 || auth[colon+1:at] == Marker {
			b.WriteString(rest[:i+3])
			rest = auth
			continue
		}
		b.WriteString(rest[:i+3])
		b.WriteString(auth[:colon+1])
		b.WriteString(Marker)
		rest = auth[at:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}
