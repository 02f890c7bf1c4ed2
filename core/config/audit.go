package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Audit is where the audit goes besides the database (audit: in
// switchboard.yaml): every row written is also written to each sink.
//
//	audit:
//	  sinks:
//	    - {file: /var/log/switchboard/audit.jsonl}
//	    - {webhook: "https://siem.example.com/hook", secret_env: AUDIT_HMAC_KEY}
//	    - {otlp: true}
//
// A webhook sink is durable: its delivery commits with the row, through
// the work queue. A file and OTLP are written after the commit, at most
// once. Changes take effect at the next start.
type Audit struct {
	// Sinks each name one kind: file, webhook or otlp.
	Sinks []AuditSink `yaml:"sinks,omitempty" json:"sinks,omitempty"`
}

// AuditSink is one place audit rows go. Exactly one of File, Webhook and
// OTLP is set.
type AuditSink struct {
	// File is a JSON-lines file each row is appended to, one JSON object a
	// line; it is rotated by size (see MaxSizeMB).
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// MaxSizeMB is the size at which the file is rotated: renamed with a
	// time stamp beside it (NAME-2026-12-07T09-00-00.000.EXT) and a new one
	// started (default 100).
	MaxSizeMB int `yaml:"max_size_mb,omitempty" json:"max_size_mb,omitempty"`
	// MaxBackups is how many rotated files are kept (default 10; the
	// oldest are deleted).
	MaxBackups int `yaml:"max_backups,omitempty" json:"max_backups,omitempty"`
	// MaxAgeDays deletes rotated files older than this many days (default
	// 0: kept whatever their age, within MaxBackups).
	MaxAgeDays int `yaml:"max_age_days,omitempty" json:"max_age_days,omitempty"`
	// Compress gzips rotated files.
	Compress bool `yaml:"compress,omitempty" json:"compress,omitempty"`

	// Webhook is an https URL each row is POSTed to as JSON, signed with
	// HMAC-SHA256 (the Switchboard-Signature header). http is accepted
	// for a loopback address only.
	Webhook string `yaml:"webhook,omitempty" json:"webhook,omitempty"`
	// SecretEnv names the environment variable holding the webhook's
	// signing key; required with webhook, and it must be set.
	SecretEnv string `yaml:"secret_env,omitempty" json:"secret_env,omitempty"`
	// MaxAttempts is how many times a row is tried on the webhook before
	// it is given up (default 30: about two hours of retries backing off
	// to five minutes apart).
	MaxAttempts int `yaml:"max_attempts,omitempty" json:"max_attempts,omitempty"`

	// OTLP sends each row as an OpenTelemetry log record over OTLP/HTTP,
	// to the collector the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
	// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT) names.
	OTLP bool `yaml:"otlp,omitempty" json:"otlp,omitempty"`
}

// Defaults of AuditSink.
const (
	DefaultAuditFileMaxSizeMB  = 100
	DefaultAuditFileMaxBackups = 10
	DefaultAuditMaxAttempts    = 30
)

// Kind is the sink's kind: "file", "webhook" or "otlp" ("" when none is
// set).
func (s AuditSink) Kind() string {
	switch {
	case s.File != "":
		return "file"
	case s.Webhook != "":
		return "webhook"
	case s.OTLP:
		return "otlp"
	}
	return ""
}

func (s AuditSink) kinds() []string {
	var k []string
	if s.File != "" {
		k = append(k, "file")
	}
	if s.Webhook != "" {
		k = append(k, "webhook")
	}
	if s.OTLP {
		k = append(k, "otlp")
	}
	return k
}

func (a Audit) validate() error {
	files, hooks := map[string]int{}, map[string]int{}
	otlp := -1
	for i, s := range a.Sinks {
		where := fmt.Sprintf("audit.sinks[%d]", i)
		switch k := s.kinds(); len(k) {
		case 0:
			return fmt.Errorf("%s: a sink names one kind: file, webhook or otlp: true", where)
		case 1:
		default:
			return fmt.Errorf("%s: a sink has one kind, this one has %s: write each as a sink of its own", where, strings.Join(k, " and "))
		}
		if s.File == "" && (s.MaxSizeMB != 0 || s.MaxBackups != 0 || s.MaxAgeDays != 0 || s.Compress) {
			return fmt.Errorf("%s: max_size_mb, max_backups, max_age_days and compress are settings of a file sink", where)
		}
		if s.Webhook == "" && (s.SecretEnv != "" || s.MaxAttempts != 0) {
			return fmt.Errorf("%s: secret_env and max_attempts are settings of a webhook sink", where)
		}
		switch s.Kind() {
		case "file":
			if strings.HasSuffix(s.File, "/") {
				return fmt.Errorf("%s.file %q: names a directory; give the file's name", where, s.File)
			}
			if j, ok := files[filepath.Clean(s.File)]; ok {
				return fmt.Errorf("%s.file %q: audit.sinks[%d] writes the same file", where, s.File, j)
			}
			files[filepath.Clean(s.File)] = i
			switch {
			case s.MaxSizeMB < 0:
				return fmt.Errorf("%s.max_size_mb %d: must not be negative", where, s.MaxSizeMB)
			case s.MaxBackups < 0:
				return fmt.Errorf("%s.max_backups %d: must not be negative", where, s.MaxBackups)
			case s.MaxAgeDays < 0:
				return fmt.Errorf("%s.max_age_days %d: must not be negative", where, s.MaxAgeDays)
			}
		case "webhook":
			if err := CheckAuditWebhook(s.Webhook); err != nil {
				return fmt.Errorf("%s.webhook %q: %w", where, s.Webhook, err)
			}
			if j, ok := hooks[s.Webhook]; ok {
				return fmt.Errorf("%s.webhook %q: audit.sinks[%d] posts to the same URL", where, s.Webhook, j)
			}
			hooks[s.Webhook] = i
			if s.SecretEnv == "" {
				return fmt.Errorf("%s.secret_env: a webhook needs the name of the environment variable holding its HMAC signing key", where)
			}
			if !envNameRE.MatchString(s.SecretEnv) {
				return fmt.Errorf("%s.secret_env %q: must be an environment variable's name (letters, digits and _)", where, s.SecretEnv)
			}
			if s.MaxAttempts < 0 || s.MaxAttempts > 1000 {
				return fmt.Errorf("%s.max_attempts %d: must be between 1 and 1000 (0: the default, %d)", where, s.MaxAttempts, DefaultAuditMaxAttempts)
			}
		case "otlp":
			if otlp >= 0 {
				return fmt.Errorf("%s: audit.sinks[%d] is already the otlp sink", where, otlp)
			}
			otlp = i
		}
	}
	return nil
}

// checkEnv checks that each webhook's secret_env is set in env, and that
// an otlp sink has a collector to export to.
func (a Audit) checkEnv(env Env) error {
	for i, s := range a.Sinks {
		if s.Webhook != "" && strings.TrimSpace(env(s.SecretEnv)) == "" {
			return fmt.Errorf("audit.sinks[%d].secret_env: %s is not set in the environment (the webhook's HMAC signing key)", i, s.SecretEnv)
		}
		if s.OTLP && env("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") == "" {
			return fmt.Errorf("audit.sinks[%d].otlp: set OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT) to the collector's OTLP/HTTP address", i)
		}
	}
	return nil
}

// Secrets are the values of the webhooks' secret_env in env, for the
// redaction of logs and errors.
func (a Audit) Secrets(env Env) []string {
	var out []string
	for _, s := range a.Sinks {
		if s.SecretEnv != "" {
			if v := env(s.SecretEnv); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// CheckAuditWebhook checks a webhook sink's URL: https, or http to a
// loopback address (a test, a collector beside the service); no user
// name or password in it (the signature authenticates).
func CheckAuditWebhook(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Host == "" || u.Hostname() == "" {
		return errors.New("must be an absolute https URL with a host")
	}
	if u.User != nil {
		return errors.New("must not carry a user name or password; the signature authenticates each request")
	}
	if u.Fragment != "" {
		return errors.New("must not have a #fragment")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return errors.New("http is accepted for a loopback address only (127.0.0.1, ::1, localhost); use https")
	}
	return fmt.Errorf("scheme %q: must be https (or http to a loopback address)", u.Scheme)
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
