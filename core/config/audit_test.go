package config

import (
	"strings"
	"testing"
)

func TestAuditSinks(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"AUDIT_HMAC_KEY": "k", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}[k]
	}
	cfg, err := Parse("", []byte(`
audit:
  sinks:
    - {file: /var/log/switchboard/audit.jsonl, max_size_mb: 5}
    - {webhook: "https://127.0.0.1:8443/hook", secret_env: AUDIT_HMAC_KEY}
    - {webhook: "http://[::1]:9000/hook", secret_env: AUDIT_HMAC_KEY, max_attempts: 5}
    - {otlp: true}
`), env)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range cfg.Audit.Sinks {
		kinds = append(kinds, s.Kind())
	}
	if got := strings.Join(kinds, ","); got != "file,webhook,webhook,otlp" {
		t.Fatalf("sink kinds = %s", got)
	}
	if got := cfg.Audit.Secrets(env); len(got) != 2 || got[0] != "k" {
		t.Fatalf("secrets = %q, want the webhooks' key", got)
	}
}

// Each bad sink is refused with the field it names.
func TestAuditSinksErrors(t *testing.T) {
	env := func(k string) string { return map[string]string{"AUDIT_HMAC_KEY": "k"}[k] }
	for _, c := range []struct{ yaml, want string }{
		{`{file: /tmp/a.jsonl, webhook: "https://127.0.0.1/h", secret_env: AUDIT_HMAC_KEY}`, "audit.sinks[0]: a sink has one kind, this one has file and webhook"},
		{`{webhook: "https://127.0.0.1/h", otlp: true}`, "audit.sinks[0]: a sink has one kind, this one has webhook and otlp"},
		{`{}`, "audit.sinks[0]: a sink names one kind"},
		{`{webhook: "https://127.0.0.1/h"}`, "audit.sinks[0].secret_env: a webhook needs the name of the environment variable"},
		{`{webhook: "https://127.0.0.1/h", secret_env: NOT_SET}`, "audit.sinks[0].secret_env: NOT_SET is not set in the environment"},
		{`{webhook: "https://127.0.0.1/h", secret_env: "not a name"}`, `audit.sinks[0].secret_env "not a name": must be an environment variable's name`},
		{`{webhook: "ftp://127.0.0.1/h", secret_env: AUDIT_HMAC_KEY}`, `audit.sinks[0].webhook "ftp://127.0.0.1/h": scheme "ftp": must be https`},
		{`{webhook: "127.0.0.1/h", secret_env: AUDIT_HMAC_KEY}`, `audit.sinks[0].webhook "127.0.0.1/h": must be an absolute https URL with a host`},
		{`{webhook: "https://u:p@127.0.0.1/h", secret_env: AUDIT_HMAC_KEY}`, `audit.sinks[0].webhook "https://u:p@127.0.0.1/h": must not carry a user name or password`},
		{`{webhook: "https://127.0.0.1/h", secret_env: AUDIT_HMAC_KEY, max_attempts: -1}`, "audit.sinks[0].max_attempts -1: must be between 1 and 1000"},
		{`{file: /tmp/a.jsonl, secret_env: AUDIT_HMAC_KEY}`, "audit.sinks[0]: secret_env and max_attempts are settings of a webhook sink"},
		{`{otlp: true, max_size_mb: 3}`, "audit.sinks[0]: max_size_mb, max_backups, max_age_days and compress are settings of a file sink"},
		{`{file: /tmp/a.jsonl, max_size_mb: -1}`, "audit.sinks[0].max_size_mb -1: must not be negative"},
		{`{file: /tmp/dir/}`, `audit.sinks[0].file "/tmp/dir/": names a directory`},
		{`{otlp: true}`, "audit.sinks[0].otlp: set OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"{file: /tmp/a.jsonl}\n    - {file: /tmp/./a.jsonl}", `audit.sinks[1].file "/tmp/./a.jsonl": audit.sinks[0] writes the same file`},
		{"{otlp: true}\n    - {otlp: true}", "audit.sinks[1]: audit.sinks[0] is already the otlp sink"},
	} {
		_, err := Parse("switchboard.yaml", []byte("audit:\n  sinks:\n    - "+c.yaml+"\n"), env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.yaml, err, c.want)
		}
	}
}
