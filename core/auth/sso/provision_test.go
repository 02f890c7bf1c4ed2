package sso_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/auth/sso"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

const issuer = "https://idp.example.test"

func newSSO(t *testing.T, st store.Store, groups map[string]config.SSOGroup) *sso.SSO {
	t.Helper()
	s, err := sso.New(sso.Options{
		Issuer: issuer, ClientID: "sb", PublicURL: "http://127.0.0.1:8080", Store: st,
		Config: config.SSO{Groups: groups}, Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func roleOf(t *testing.T, st store.Store, ws, person uuid.UUID) store.Role {
	t.Helper()
	m, err := st.WorkspaceMemberGet(context.Background(), &store.WorkspaceMemberParams{WorkspaceID: ws, PersonID: person})
	if errors.Is(err, store.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return m.Role
}

// TestProvisionRules: the rules of just-in-time roles, on both stores. An
// owner group makes the first signer-in the owner of the workspace it
// makes, and gives admin where the workspace has an owner already; a role
// changed by hand since SSO gave it is not taken back; a role given by
// hand in a workspace no group names stays; a workspace id that does not
// exist is skipped, not made; an email that is not verified links nobody.
func TestProvisionRules(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		ctx := context.Background()
		st := open(t)
		missing := uuid.New()
		s := newSSO(t, st, map[string]config.SSOGroup{
			"owners":  {Workspace: "T0OWN", Role: "owner"},
			"members": {Workspace: "T0OWN", Role: "member"},
			"ghosts":  {Workspace: missing.String(), Role: "admin"},
		})

		first, err := s.Provision(ctx, &sso.Identity{Issuer: issuer, Subject: "s1", Name: "Olga", Groups: []string{"owners", "ghosts"}})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := workspace.NewService(st).Named(ctx, "T0OWN")
		if err != nil {
			t.Fatalf("the workspace of T0OWN: %v", err)
		}
		w, _ := st.WorkspaceGet(ctx, ws)
		if w.OwnerPersonID != first.Person.ID || roleOf(t, st, ws, first.Person.ID) != store.RoleOwner {
			t.Errorf("T0OWN owner %s; want the first owner-group signer-in %s", w.OwnerPersonID, first.Person.ID)
		}
		if len(first.Skipped) != 1 || !first.Created {
			t.Errorf("skipped %v, created %v; want the missing workspace id skipped and the person made", first.Skipped, first.Created)
		}
		if _, err := st.WorkspaceGet(ctx, missing); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a workspace id that does not exist: %v; want it not made", err)
		}

		second, err := s.Provision(ctx, &sso.Identity{Issuer: issuer, Subject: "s2", Email: "p@example.test", Groups: []string{"owners"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := roleOf(t, st, ws, second.Person.ID); got != store.RoleAdmin {
			t.Errorf("a second owner-group member's role = %q; want admin (the owner never changes)", got)
		}
		// An unverified email links nobody: a new subject with it is a
		// new person.
		third, err := s.Provision(ctx, &sso.Identity{Issuer: issuer, Subject: "s3", Email: "p@example.test", Groups: []string{"members"}})
		if err != nil {
			t.Fatal(err)
		}
		if third.Person.ID == second.Person.ID {
			t.Errorf("an unverified email linked subject s3 to s2's person")
		}

		// Changed by hand (member -> admin): SSO does not take it back.
		if _, err := st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws, PersonID: third.Person.ID, Role: store.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
		// Given by hand in a workspace no group names.
		other, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "other", Kind: store.WorkspaceTeam, OwnerPersonID: first.Person.ID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: other.ID, PersonID: third.Person.ID, Role: store.RoleMember}); err != nil {
			t.Fatal(err)
		}
		again, err := s.Provision(ctx, &sso.Identity{Issuer: issuer, Subject: "s3"})
		if err != nil {
			t.Fatal(err)
		}
		if again.Person.ID != third.Person.ID {
			t.Fatalf("s3 again is %s; want %s", again.Person.ID, third.Person.ID)
		}
		if got := roleOf(t, st, ws, third.Person.ID); got != store.RoleAdmin {
			t.Errorf("a role changed by hand after SSO gave it = %q after leaving the group; want admin kept", got)
		}
		if got := roleOf(t, st, other.ID, third.Person.ID); got != store.RoleMember {
			t.Errorf("a role given by hand elsewhere = %q; want member kept", got)
		}
		// Leaving the group takes back what SSO gave (second: admin).
		if _, err := s.Provision(ctx, &sso.Identity{Issuer: issuer, Subject: "s2"}); err != nil {
			t.Fatal(err)
		}
		if got := roleOf(t, st, ws, second.Person.ID); got != "" {
			t.Errorf("after leaving the owners group: role %q; want none", got)
		}
		// The owner stays the owner whatever their groups.
		if _, err := s.Provision(ctx, &sso.Identity{Issuer: issuer, Subject: "s1"}); err != nil {
			t.Fatal(err)
		}
		if got := roleOf(t, st, ws, first.Person.ID); got != store.RoleOwner {
			t.Errorf("the owner after leaving every group = %q; want owner", got)
		}
	})
}
