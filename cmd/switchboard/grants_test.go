package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestGrantsListAndRevoke: `switchboard grants list` shows the standing
// grants with their workspace's name, filtered by workspace id or platform
// workspace; `grants revoke ID` revokes one, which the guard then no longer
// finds; -revoked lists it again. On both stores.
func TestGrantsListAndRevoke(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + testenv.SQLiteFile(t) }},
		{"postgres", func(t *testing.T) string {
			return testenv.PostgresURL(t) + "&switchboard_schema=" + testenv.PostgresSchema(t)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := tc.db(t)
			st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			ws, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Acme Ops", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New()})
			if err != nil {
				t.Fatal(err)
			}
			inAcme, err := st.GrantCreate(ctx, &store.GrantCreateParams{Agent: "atlas", Tool: "send_email", Workspace: "T0ACME", WorkspaceID: &ws.ID, GrantedBy: "U0ALICE"})
			if err != nil {
				t.Fatal(err)
			}
			loose, err := st.GrantCreate(ctx, &store.GrantCreateParams{Agent: "scout", Tool: "remind", Workspace: "T0LOOSE", GrantedBy: "U0BOB"})
			if err != nil {
				t.Fatal(err)
			}
			grants := func(args ...string) (string, error) {
				var out, errOut bytes.Buffer
				err := run(ctx, append([]string{"grants", args[0], "-log-level", "error"}, args[1:]...), env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut)
				return out.String(), err
			}
			lineOf := func(out string, id uuid.UUID) string {
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, id.String()) {
						return l
					}
				}
				return ""
			}

			out, err := grants("list")
			if err != nil {
				t.Fatalf("grants list: %v", err)
			}
			if l := lineOf(out, inAcme.ID); !strings.Contains(l, "Acme Ops (T0ACME)") || !strings.Contains(l, "send_email") {
				t.Errorf("grants list row of the workspace's grant = %q, want its workspace's name and team", l)
			}
			if l := lineOf(out, loose.ID); !strings.Contains(l, "T0LOOSE") || !strings.Contains(l, "remind") {
				t.Errorf("grants list row of the grant of no workspace = %q, want its team", l)
			}
			out, err = grants("list", "-workspace", ws.ID.String())
			if err != nil || lineOf(out, inAcme.ID) == "" || lineOf(out, loose.ID) != "" {
				t.Errorf("grants list -workspace %s = %q, %v; want only the workspace's grant", ws.ID, out, err)
			}
			out, err = grants("list", "-workspace", "T0LOOSE")
			if err != nil || lineOf(out, loose.ID) == "" || lineOf(out, inAcme.ID) != "" {
				t.Errorf("grants list -workspace T0LOOSE = %q, %v; want only that team's grant", out, err)
			}

			out, err = grants("revoke", inAcme.ID.String())
			if err != nil || !strings.Contains(out, "revoked "+inAcme.ID.String()) {
				t.Fatalf("grants revoke = %q, %v", out, err)
			}
			if _, err := st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", WorkspaceID: &ws.ID}); err == nil {
				t.Error("the guard still finds the revoked grant")
			}
			if out, _ = grants("list"); lineOf(out, inAcme.ID) != "" || lineOf(out, loose.ID) == "" {
				t.Errorf("grants list after the revoke = %q, want only the other grant", out)
			}
			if out, _ = grants("list", "-revoked"); !strings.Contains(lineOf(out, inAcme.ID), "Acme Ops") {
				t.Errorf("grants list -revoked = %q, want the revoked grant with its workspace", out)
			}
			if _, err := grants("revoke", uuid.NewString()); err == nil || !strings.Contains(err.Error(), "no grant") {
				t.Errorf("revoking an unknown grant: %v, want an error that says so", err)
			}
			if _, err := grants("revoke", "nope"); err == nil || !strings.Contains(err.Error(), "not a grant id") {
				t.Errorf("revoking a malformed id: %v, want an error that says so", err)
			}
		})
	}
}
