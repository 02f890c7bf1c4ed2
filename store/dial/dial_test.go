package dial

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in       string
		driver   string
		path     string
		url      string
		simple   bool
		schema   string
		wantErr  string
		noSecret string
	}{
		{in: "", driver: "sqlite", path: DefaultSQLitePath},
		{in: "sqlite:/tmp/x.db", driver: "sqlite", path: "/tmp/x.db"},
		{in: "sqlite:", wantErr: "needs a file path"},
		{in: "postgres://u@127.0.0.1:5432/db", driver: "postgres", url: "postgres://u@127.0.0.1:5432/db"},
		{in: "postgresql://u@h/db?switchboard_simple_protocol=1&sslmode=disable", driver: "postgres", url: "postgresql://u@h/db?sslmode=disable", simple: true},
		{in: "postgres://u@h/db?switchboard_schema=tenant_a", driver: "postgres", url: "postgres://u@h/db", schema: "tenant_a"},
		{in: "postgres:///db", wantErr: "no host"},
		{in: "postgres://u:hunter2@h:99999999999/db%zz", wantErr: "DATABASE_URL", noSecret: "hunter2"},
		{in: "mysql://u:hunter2@h/db", wantErr: "unsupported scheme \"mysql\"", noSecret: "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "DATABASE_URL") {
					t.Fatalf("Parse(%q) error = %v, want one naming DATABASE_URL and containing %q", tt.in, err, tt.wantErr)
				}
				if tt.noSecret != "" && strings.Contains(err.Error(), tt.noSecret) {
					t.Fatalf("Parse(%q) error leaks the password: %v", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got.Driver != tt.driver || got.Path != tt.path || got.URL != tt.url || got.SimpleProtocol != tt.simple || got.Schema != tt.schema {
				t.Fatalf("Parse(%q) = %+v, want driver %q path %q url %q simple %v schema %q", tt.in, got, tt.driver, tt.path, tt.url, tt.simple, tt.schema)
			}
		})
	}
}
