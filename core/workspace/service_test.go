package workspace_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// team makes a team workspace with an owner, an admin and a member, and
// returns the service on st, the workspace and the three people.
func team(t *testing.T, st store.Store) (s *workspace.Service, ws uuid.UUID, owner, admin, member workspace.Actor) {
	t.Helper()
	ctx := context.Background()
	s = workspace.NewService(st)
	owner, admin, member = workspace.Actor{Person: uuid.New()}, workspace.Actor{Person: uuid.New()}, workspace.Actor{Person: uuid.New()}
	w, err := s.Create(ctx, owner.Person, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMember(ctx, owner, w.ID, admin.Person, store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMember(ctx, admin, w.ID, member.Person, ""); err != nil {
		t.Fatalf("an admin invites a member (the default role): %v", err)
	}
	return s, w.ID, owner, admin, member
}

// TestRightsOfActors: the operator may do everything; nobody (an agent's
// or host's credential) nothing; a stranger finds no workspace; a
// credential scoped elsewhere is refused even for its owner.
func TestRightsOfActors(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s, ws, owner, _, member := team(t, open(t))
		if err := s.Rights(ctx, workspace.TheOperator, nil, workspace.Delete); err != nil {
			t.Errorf("the operator, outside any workspace: %v", err)
		}
		if err := s.Rights(ctx, workspace.Actor{}, &ws, workspace.Use); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("nobody: %v, want ErrForbidden", err)
		}
		if err := s.Rights(ctx, owner, nil, workspace.Use); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("a person, outside any workspace: %v, want ErrForbidden", err)
		}
		if err := s.Rights(ctx, workspace.Actor{Person: uuid.New()}, &ws, workspace.Use); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a stranger: %v, want ErrNotFound (the workspace is not revealed)", err)
		}
		scoped := workspace.Actor{Person: owner.Person, Scope: []uuid.UUID{uuid.New()}}
		if err := s.Rights(ctx, scoped, &ws, workspace.Use); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("the owner with a token scoped elsewhere: %v, want ErrForbidden", err)
		}
		if err := s.Rights(ctx, member, &ws, workspace.Invite); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("a member inviting: %v, want ErrForbidden", err)
		}
		ms, err := s.Memberships(ctx, scoped, owner.Person)
		if err != nil || len(ms) != 0 {
			t.Errorf("the memberships a token scoped elsewhere sees: %d, %v; want none", len(ms), err)
		}
		if ms, err := s.Memberships(ctx, owner, owner.Person); err != nil || len(ms) != 1 {
			t.Errorf("the owner's memberships: %d, %v; want 1", len(ms), err)
		}
	})
}

// TestRolesTakeTheOwner: an admin invites and removes members, but making
// someone an admin (by adding them again) or removing an admin is the
// owner's decision.
func TestRolesTakeTheOwner(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s, ws, owner, admin, member := team(t, open(t))
		if _, err := s.AddMember(ctx, admin, ws, member.Person, store.RoleAdmin); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("an admin promoting a member by adding them again: %v, want ErrForbidden", err)
		}
		if _, err := s.AddMember(ctx, admin, ws, member.Person, store.RoleMember); err != nil {
			t.Errorf("an admin adding a member again with the same role: %v", err)
		}
		if _, err := s.SetRole(ctx, admin, ws, member.Person, store.RoleAdmin); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("an admin changing a role: %v, want ErrForbidden", err)
		}
		if _, err := s.SetRole(ctx, owner, ws, uuid.New(), store.RoleAdmin); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a role for a stranger: %v, want ErrNotFound", err)
		}
		second := uuid.New()
		if _, err := s.AddMember(ctx, owner, ws, second, store.RoleAdmin); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveMember(ctx, admin, ws, second); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("an admin removing an admin: %v, want ErrForbidden", err)
		}
		if err := s.RemoveMember(ctx, admin, ws, member.Person); err != nil {
			t.Errorf("an admin removing a member: %v", err)
		}
		if err := s.Delete(ctx, admin, ws); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("an admin deleting the workspace: %v, want ErrForbidden", err)
		}
	})
}

// TestRetentionRules: the owner sets the retention, not an admin; the
// export directory is the operator's, and a change that does not name it
// keeps it.
func TestRetentionRules(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s, ws, owner, admin, _ := team(t, open(t))
		if _, err := s.SetRetention(ctx, admin, ws, workspace.RetentionChange{KeepDays: 30}); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("an admin setting the retention: %v, want ErrForbidden", err)
		}
		dir := "/srv/export"
		if _, err := s.SetRetention(ctx, owner, ws, workspace.RetentionChange{KeepDays: 30, ExportDir: &dir}); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("the owner setting the export directory: %v, want ErrForbidden", err)
		}
		if _, err := s.SetRetention(ctx, workspace.TheOperator, ws, workspace.RetentionChange{KeepDays: 30, ExportDir: &dir}); err != nil {
			t.Fatal(err)
		}
		r, err := s.SetRetention(ctx, owner, ws, workspace.RetentionChange{KeepDays: 60})
		if err != nil || r.KeepDays != 60 || r.ExportDir != dir {
			t.Errorf("the owner changing the days: %+v, %v; want 60 days, the directory kept", r, err)
		}
	})
}

// TestForNewConversation: a person's conversation goes to their personal
// workspace unless their token is scoped away from it; one asked for takes
// the right to use it.
func TestForNewConversation(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s, ws, _, _, member := team(t, open(t))
		got, err := s.ForNew(ctx, member, nil)
		if err != nil || got == nil || *got == ws {
			t.Fatalf("a member's new conversation: %v, %v; want their personal workspace", got, err)
		}
		scoped := workspace.Actor{Person: member.Person, Scope: []uuid.UUID{ws}}
		if _, err := s.ForNew(ctx, scoped, nil); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("a token scoped to the team, for the personal workspace: %v, want ErrForbidden", err)
		}
		if got, err := s.ForNew(ctx, scoped, &ws); err != nil || *got != ws {
			t.Errorf("asking for the team: %v, %v", got, err)
		}
		if _, err := s.ForNew(ctx, workspace.Actor{Person: uuid.New()}, &ws); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a stranger asking for the team: %v, want ErrNotFound", err)
		}
		if got, err := s.ForNew(ctx, workspace.TheOperator, nil); err != nil || got != nil {
			t.Errorf("the operator's: %v, %v; want none", got, err)
		}
	})
}

// TestNamedWorkspace: a workspace is named by its id or by a Slack team
// or Discord guild bound to it; an unbound team names none.
func TestNamedWorkspace(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s, ws, owner, _, _ := team(t, open(t))
		if _, err := s.Bind(ctx, owner, ws, "slack", "T0NAMED"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Bind(ctx, owner, ws, "discord", "4242"); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{ws.String(), "T0NAMED", "4242"} {
			if got, err := s.Named(ctx, ref); err != nil || got != ws {
				t.Errorf("Named(%q) = %s, %v; want %s", ref, got, err, ws)
			}
		}
		for _, ref := range []string{"T0UNBOUND", ""} {
			if got, err := s.Named(ctx, ref); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Named(%q) = %s, %v; want ErrNotFound", ref, got, err)
			}
		}
	})
}

// TestVisibility: the operator sees every workspace, nobody none, a person
// those they belong to, narrowed by their credential's scope.
func TestVisibility(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		s, ws, _, _, member := team(t, open(t))
		if v, err := s.Visibility(ctx, workspace.TheOperator); err != nil || !v.All {
			t.Errorf("the operator: %+v, %v; want all", v, err)
		}
		if v, err := s.Visibility(ctx, workspace.Actor{}); err != nil || v.All || len(v.Workspaces) != 0 {
			t.Errorf("nobody: %+v, %v; want none", v, err)
		}
		if v, err := s.Visibility(ctx, member); err != nil || v.All || len(v.Workspaces) != 1 || v.Workspaces[0] != ws {
			t.Errorf("a member: %+v, %v; want the team", v, err)
		}
		scoped := workspace.Actor{Person: member.Person, Scope: []uuid.UUID{uuid.New()}}
		if v, err := s.Visibility(ctx, scoped); err != nil || len(v.Workspaces) != 0 {
			t.Errorf("a member scoped elsewhere: %+v, %v; want none", v, err)
		}
	})
}
