package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// The keys and tokens commands work on the store of the service: a key
// made by `switchboard keys create` is exchanged by the running service,
// and `keys revoke` ends it.
func TestKeysCommands(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	getenv := env(map[string]string{"DATABASE_URL": db, "SWITCHBOARD_API_TOKEN": "operator-secret"})
	sb := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, getenv, nil, &out, &errOut)
		return out.String(), err
	}
	out, err := sb("keys", "create", "--agent", "switchboard", "--label", "ci")
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	key := strings.Fields(out)[0]
	if !strings.HasPrefix(key, "sbk_") || !strings.Contains(out, "only time the token is shown") {
		t.Fatalf("keys create printed %q; want the sbk_ token first and that it is shown once", out)
	}
	parts := strings.SplitN(key, "_", 3) // the secret may hold "_" too
	id := parts[0] + "_" + parts[1]

	cfg, err := app.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "-"
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	exchange := func() int {
		req := httptest.NewRequest(http.MethodPost, "/api/auth/token", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		a.Mux.ServeHTTP(rec, req)
		return rec.Code
	}
	if got := exchange(); got != http.StatusCreated {
		t.Fatalf("exchanging the key made by the command = %d; want 201", got)
	}

	out, err = sb("keys", "list")
	if err != nil || !strings.Contains(out, id) || !strings.Contains(out, "switchboard") || strings.Contains(out, key) {
		t.Fatalf("keys list = %q, %v; want the key's id and agent, never the token", out, err)
	}
	if out, err = sb("keys", "revoke", id); err != nil || !strings.Contains(out, "revoked "+id) {
		t.Fatalf("keys revoke = %q, %v", out, err)
	}
	if got := exchange(); got != http.StatusUnauthorized {
		t.Fatalf("exchanging a revoked key = %d; want 401", got)
	}
	if out, _ = sb("keys", "list"); strings.Contains(out, id) {
		t.Fatalf("keys list after revoke = %q; want the key gone (it shows with --revoked)", out)
	}
	if out, _ = sb("keys", "list", "--revoked"); !strings.Contains(out, id) || !strings.Contains(out, "revoked") {
		t.Fatalf("keys list --revoked = %q; want the revoked key", out)
	}

	person, ws1, ws2 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	out, err = sb("tokens", "create", "--person", person, "--workspace", ws1, "--workspace", ws2, "--expires", "720h")
	if err != nil || !strings.HasPrefix(out, "sbp_") {
		t.Fatalf("tokens create = %q, %v; want an sbp_ token", out, err)
	}
	if out, _ = sb("tokens", "list"); !strings.Contains(out, person) || !strings.Contains(out, ws2) || !strings.Contains(out, "expires") {
		t.Fatalf("tokens list = %q; want the person, both workspaces and the expiry", out)
	}
	out, err = sb("keys", "create", "--host", "--agent", "switchboard")
	if err != nil || !strings.HasPrefix(out, "sbh_") {
		t.Fatalf("keys create --host = %q, %v; want an sbh_ token", out, err)
	}
}

func TestKeysCommandErrors(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"keys"}, "no subcommand"},
		{[]string{"keys", "mint"}, `unknown subcommand "mint"`},
		{[]string{"keys", "create"}, "exactly one agent"},
		{[]string{"keys", "create", "--agent", "ghost"}, `agent "ghost" is not configured`},
		{[]string{"keys", "create", "--host"}, "name the agents"},
		{[]string{"keys", "revoke"}, "give one key id"},
		{[]string{"keys", "revoke", "sbk_0000000000000000"}, "not found"},
		{[]string{"keys", "revoke", "hello"}, "not a key id"},
		{[]string{"tokens", "create", "--person", "bob", "--workspace", uuid.NewString()}, `--person "bob"`},
		{[]string{"tokens", "create", "--person", uuid.NewString(), "--workspace", "w1"}, `--workspace "w1"`},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("switchboard %s: %v; want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve"}, env(map[string]string{"SWITCHBOARD_SESSION_TTL": "forever"}), nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_SESSION_TTL") {
		t.Errorf("serve with SWITCHBOARD_SESSION_TTL=forever: %v; want an error naming the variable", err)
	}
}
