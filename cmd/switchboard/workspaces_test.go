package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestWorkspaceAndAgentCommands drives the operator's commands as a shell
// would, against one SQLite file.
func TestWorkspaceAndAgentCommands(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	sb := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{args[0], "-log-level", "error"}, args[1:]...), env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut)
		return out.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := sb(args...)
		if err != nil {
			t.Fatalf("switchboard %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	ana, bo := uuid.New().String(), uuid.New().String()

	out := must("workspaces", "create", ana, "Acme")
	ws := regexp.MustCompile(`workspace ([0-9a-f-]{36})`).FindStringSubmatch(out)
	if ws == nil {
		t.Fatalf("workspaces create printed %q; want the new id", out)
	}
	must("workspaces", "add", ws[1], bo, "admin")
	if out := must("workspaces", "list", bo); !strings.Contains(out, "admin") || !strings.Contains(out, "Acme") {
		t.Fatalf("workspaces list of bo = %q; want Acme as admin", out)
	}
	if _, err := sb("workspaces", "role", ws[1], ana, "member"); err == nil || !strings.Contains(err.Error(), "can never be removed or reassigned") {
		t.Fatalf("demoting the owner: want a refusal that says why, got %v", err)
	}
	if _, err := sb("workspaces", "remove", ws[1], ana); err == nil || !strings.Contains(err.Error(), "can never be removed or reassigned") {
		t.Fatalf("removing the owner: want a refusal that says why, got %v", err)
	}
	must("workspaces", "bind", ws[1], "slack", "T1")

	// An agent as serve records it from switchboard.yaml.
	st, err := dial.Open(context.Background(), dial.Options{DatabaseURL: db})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.AgentUpsert(context.Background(), &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`)})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	must("agents", "pin", "atlas", ws[1])
	_, err = sb("agents", "publish", "atlas")
	if err == nil || !strings.Contains(err.Error(), `pinned to the team workspace "Acme"`) || !strings.Contains(err.Error(), "cannot be listed in the public directory") {
		t.Fatalf("publishing an agent pinned to a team: want a refusal that says why, got %v", err)
	}
	if out := must("agents", "directory"); out != "" {
		t.Fatalf("the directory after the refusal = %q; want it empty", out)
	}
	must("agents", "pin", "atlas")
	must("agents", "publish", "atlas")
	if out := must("agents", "directory"); out != "atlas\n" {
		t.Fatalf("the directory = %q; want atlas", out)
	}
	must("workspaces", "delete", ws[1])
}
