package instances_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/migrations"
)

// TestSchemaOfANewerRelease runs the binary on a schema a release it does
// not know migrated, on both stores (the release's rows written into the
// version table as its runner leaves them):
//
//  1. Newer, with a floor this binary meets (an expand release): serve
//     starts, /readyz is 200 and says so, and the log warns once.
//  2. A contract migration lands under the running serve: /readyz answers
//     503, naming the release to run.
//  3. serve, chat, migrate and a store command (grants list) each refuse
//     to start: exit status 1, and a message naming the schema version,
//     the binary that applied it and the release to run.
func TestSchemaOfANewerRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts service processes")
	}
	t.Run("sqlite", func(t *testing.T) {
		schemaOfANewerRelease(t, "sqlite:"+filepath.Join(t.TempDir(), "switchboard.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		url := testenv.PostgresURL(t)
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		schemaOfANewerRelease(t, url+sep+"switchboard_schema="+testenv.PostgresEmptySchema(t))
	})
}

func schemaOfANewerRelease(t *testing.T, db string) {
	w := newWorldOn(t, worldOptions{db: db, leaseTTL: 3 * time.Second})
	w.model.Default(modeltest.Reply{Text: reply})
	latest, err := migrations.Latest("postgres")
	if err != nil {
		t.Fatal(err)
	}

	// The binary migrates the empty store first, as a deploy does.
	m := launch(t, "migrate", w.env, "migrate")
	if err := waitExit(m); err != nil {
		t.Fatalf("switchboard migrate on an empty store: %v\n%s", err, m.out.String())
	}

	// 1. A newer release migrated, keeping binaries of this schema working.
	const expand = "v9.1.0 (commit 9191aaaa9191)"
	testenv.RecordSchemaVersion(t, db, latest+1, latest, expand)
	serve := launch(t, "serve", w.env, "serve")
	serve.waitReady()
	code, body := serve.readyz()
	if want := fmt.Sprintf("schema %d, newer than this binary's %d (applied by %s) and compatible with it", latest+1, latest, expand); code != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("/readyz on a newer, compatible schema: %d %q; want 200 saying %q", code, body, want)
	}
	warning := "the schema is newer than this binary, and compatible with it"
	if n := strings.Count(serve.out.String(), warning); n != 1 {
		t.Errorf("serve logged %q %d times; want once:\n%s", warning, n, tail(serve.out.String(), 30))
	}
	if out := serve.out.String(); !strings.Contains(out, fmt.Sprintf("schema_version=%d", latest+1)) || !strings.Contains(out, "applied_by=\""+expand+"\"") {
		t.Errorf("the warning does not name the schema version and who applied it:\n%s", tail(out, 30))
	}

	// 2. A contract migration under the running serve.
	const contract = "v9.2.0 (commit 9292bbbb9292)"
	testenv.RecordSchemaVersion(t, db, latest+2, latest+2, contract)
	if !poll(waitLong, func() bool { code, body = serve.readyz(); return code == http.StatusServiceUnavailable }) {
		t.Fatalf("/readyz after a contract migration under the running serve: %d %q, want 503", code, body)
	}
	if want := "run switchboard " + contract + " or later"; !strings.Contains(body, want) {
		t.Errorf("/readyz after a contract migration: %q; want it to say %q", body, want)
	}
	serve.kill()

	// 3. Every command that opens the store refuses it.
	for _, args := range [][]string{{"serve"}, {"chat"}, {"migrate"}, {"grants", "list"}} {
		p := launch(t, args[0], w.env, args...)
		err := waitExit(p)
		out := p.out.String()
		if err == nil {
			t.Errorf("switchboard %s on a schema contracted past it exited 0; want a refusal:\n%s", strings.Join(args, " "), tail(out, 20))
			continue
		}
		for _, want := range []string{
			fmt.Sprintf("the database schema is at version %d, applied by switchboard %s", latest+2, contract),
			fmt.Sprintf("binaries shipping a schema before %d stop working on it", latest+2),
			fmt.Sprintf("ships schema %d: run switchboard %s or later", latest, contract),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("switchboard %s: the refusal does not say %q:\n%s", strings.Join(args, " "), want, tail(out, 20))
			}
		}
	}
}

// waitExit waits for p to end and returns its exit error.
func waitExit(p *proc) error {
	p.t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(waitLong):
		p.t.Fatalf("%s did not end within %s:\n%s", p.name, waitLong, tail(p.out.String(), 20))
		return nil
	}
}
