package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/migrations"
)

// TestVersion sets the release stamps (package variables every command
// reads), so it runs alone, not beside the other tests.
func TestVersion(t *testing.T) {
	// version answers even where the settings are wrong: it is what a bug
	// report asks for first.
	bad := env(map[string]string{"SWITCHBOARD_CONCURRENCY": "many"})
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"version", "-json"}, bad, nil, &out, &errOut); err != nil {
		t.Fatalf("version -json: %v\n%s", err, errOut.String())
	}
	var b buildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatalf("version -json printed %q: %v", out.String(), err)
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		latest, err := migrations.Latest(dialect)
		if err != nil {
			t.Fatal(err)
		}
		if b.Schema != latest || latest == 0 {
			t.Errorf("version reports schema %d; the %s migrations end at %d", b.Schema, dialect, latest)
		}
		ms, err := migrations.Load(dialect)
		if err != nil {
			t.Fatal(err)
		}
		if f := ms[len(ms)-1].Floor; b.SchemaFloor < f || f == 0 {
			t.Errorf("version reports schema floor %d; the %s migrations' floor is %d", b.SchemaFloor, dialect, f)
		}
	}
	if b.Version == "" || b.Go == "" || b.Platform == "" {
		t.Errorf("version -json = %+v: want version, go and platform", b)
	}

	// A release build's stamped values win over the module's.
	version, commit, date = "v1.4.0", "0123abcd", "2026-12-01T10:00:00Z"
	t.Cleanup(func() { version, commit, date = "", "", "" })
	out.Reset()
	if err := run(context.Background(), []string{"version"}, bad, nil, &out, &errOut); err != nil {
		t.Fatalf("version: %v", err)
	}
	for _, want := range []string{"switchboard v1.4.0", "commit   0123abcd", "built    2026-12-01T10:00:00Z", "schema   ", "or later run on it"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version printed:\n%s\nwant a line with %q", out.String(), want)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready {
			http.Error(w, "not ready: store", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready")
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"healthcheck", "-url", srv.URL}, env(nil), nil, &out, &errOut); err != nil {
		t.Fatalf("healthcheck of a ready service: %v", err)
	}
	ready = false
	err := run(context.Background(), []string{"healthcheck", "-url", srv.URL}, env(nil), nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "not ready: store") {
		t.Fatalf("healthcheck of a service that is not ready: %v, want the 503 and its reason", err)
	}
	// A closed loopback port: nothing listens.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	if err := run(context.Background(), []string{"healthcheck"}, env(map[string]string{"SWITCHBOARD_ADDR": addr}), nil, &out, &errOut); err == nil {
		t.Fatal("healthcheck with nothing listening at SWITCHBOARD_ADDR succeeded")
	}
}
