package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestMigrateOnAFreshFile(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "sb.db")
	var out, errOut bytes.Buffer
	for range 2 { // the second run finds nothing to do
		out.Reset()
		if err := run(context.Background(), []string{"migrate", "-log-level", "error"}, env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut); err != nil {
			t.Fatalf("migrate: %v\n%s", err, errOut.String())
		}
		if !strings.HasPrefix(out.String(), "sqlite schema at version ") {
			t.Fatalf("migrate printed %q", out.String())
		}
	}
}

func TestBadInvocations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "no command"},
		{[]string{"launch"}, nil, `unknown command "launch"`},
		{[]string{"migrate"}, map[string]string{"DATABASE_URL": "mysql://u:secret@h/db"}, "DATABASE_URL"},
		{[]string{"serve", "-log-level", "loud"}, nil, "SWITCHBOARD_LOG_LEVEL"},
		{[]string{"serve"}, map[string]string{"SWITCHBOARD_CONCURRENCY": "many"}, "SWITCHBOARD_CONCURRENCY"},
		{[]string{"serve"}, map[string]string{"SWITCHBOARD_LEASE_TTL": "15"}, "SWITCHBOARD_LEASE_TTL"},
		{[]string{"serve"}, map[string]string{"SWITCHBOARD_LEASE_TTL": "500ms"}, "SWITCHBOARD_LEASE_TTL"},
		{[]string{"serve"}, map[string]string{"SWITCHBOARD_SHUTDOWN_TIMEOUT": "soon"}, "SWITCHBOARD_SHUTDOWN_TIMEOUT"},
		{[]string{"serve"}, map[string]string{"SWITCHBOARD_WORK_RETENTION": "10m"}, "SWITCHBOARD_WORK_RETENTION"},
		{[]string{"serve"}, map[string]string{"SWITCHBOARD_WORK_RETENTION": "a week"}, "SWITCHBOARD_WORK_RETENTION"},
		{[]string{"serve"}, map[string]string{"SWITCHBOARD_LOG_FORMAT": "xml"}, "SWITCHBOARD_LOG_FORMAT"},
		{[]string{"serve"}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{[]string{"bench", "-short", "fastest"}, nil, `unknown figure "fastest"`},
		{[]string{"bench", "-workers", "0"}, nil, "-workers"},
		{[]string{"backup"}, nil, "switchboard backup PATH"},
		{[]string{"restore", "a.backup", "b.backup"}, nil, "one PATH only"},
		{[]string{"backup", "x.backup"}, map[string]string{"DATABASE_URL": "mysql://u:secret@h/db"}, "DATABASE_URL"},
		{[]string{"backup", "-log-level", "loud", "x.backup"}, nil, "SWITCHBOARD_LOG_LEVEL"},
		{[]string{"restore", "-force", "x.backup"}, map[string]string{"DATABASE_URL": "postgres://u:secret@127.0.0.1/db"}, "x.backup"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tt.args, env(tt.env), nil, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q) error = %v, want one containing %q", tt.args, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("run(%q) error leaks a password: %v", tt.args, err)
		}
	}
}

func TestServeStopsCleanly(t *testing.T) {
	t.Parallel()
	// Cancelling the context stands in for Ctrl-C once the service
	// listens: serve must start, then return nil. The deadline only bounds
	// a broken build.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	var out bytes.Buffer
	errOut := &watchWriter{want: "msg=listening", seen: cancel}
	err := run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-log-level", "info"}, env(map[string]string{"DATABASE_URL": db}), nil, &out, errOut)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, errOut.String())
	}
	if !errOut.fired() {
		t.Fatalf("serve returned before it listened:\n%s", errOut.String())
	}
}

// watchWriter keeps what is written and calls seen once it has seen want.
type watchWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	want  string
	seen  func()
	found bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if !w.found && strings.Contains(w.buf.String(), w.want) {
		w.found = true
		w.seen()
	}
	return n, err
}

func (w *watchWriter) fired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.found
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
