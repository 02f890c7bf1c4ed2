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

// TestRoleMatrix checks every action against owner, admin, member and a
// person who is not a member.
func TestRoleMatrix(t *testing.T) {
	const nonMember store.Role = ""
	want := map[workspace.Action]map[store.Role]bool{
		workspace.Use:               {store.RoleOwner: true, store.RoleAdmin: true, store.RoleMember: true, nonMember: false},
		workspace.Invite:            {store.RoleOwner: true, store.RoleAdmin: true, store.RoleMember: false, nonMember: false},
		workspace.RemoveMember:      {store.RoleOwner: true, store.RoleAdmin: true, store.RoleMember: false, nonMember: false},
		workspace.ManageConnections: {store.RoleOwner: true, store.RoleAdmin: true, store.RoleMember: false, nonMember: false},
		workspace.ConfigureAgents:   {store.RoleOwner: true, store.RoleAdmin: true, store.RoleMember: false, nonMember: false},
		workspace.ChangeRoles:       {store.RoleOwner: true, store.RoleAdmin: false, store.RoleMember: false, nonMember: false},
		workspace.Delete:            {store.RoleOwner: true, store.RoleAdmin: false, store.RoleMember: false, nonMember: false},
		workspace.Decide:            {store.RoleOwner: true, store.RoleAdmin: true, store.RoleMember: false, nonMember: false},
	}
	if len(want) != len(workspace.Actions) {
		t.Fatalf("the matrix covers %d actions, the package has %d", len(want), len(workspace.Actions))
	}
	for _, action := range workspace.Actions {
		row, ok := want[action]
		if !ok {
			t.Fatalf("action %q is missing from the matrix", action)
		}
		for _, role := range []store.Role{store.RoleOwner, store.RoleAdmin, store.RoleMember, nonMember} {
			if got := workspace.Can(role, action); got != row[role] {
				t.Errorf("Can(%q, %q) = %v, want %v", role, action, got, row[role])
			}
		}
	}
	if workspace.Can("boss", workspace.Use) {
		t.Error("an unknown role may use the workspace; want nothing allowed")
	}
}

// TestCheckAgainstTheStore runs the matrix through Check on both stores: the
// role each person really holds decides, and a non-member may do nothing.
func TestCheckAgainstTheStore(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		owner, admin, member, stranger := uuid.New(), uuid.New(), uuid.New(), uuid.New()
		ws, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Acme", Kind: store.WorkspaceTeam, OwnerPersonID: owner})
		if err != nil {
			t.Fatal(err)
		}
		for p, r := range map[uuid.UUID]store.Role{admin: store.RoleAdmin, member: store.RoleMember} {
			if _, err := st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: p, Role: r}); err != nil {
				t.Fatal(err)
			}
		}
		people := map[uuid.UUID]store.Role{owner: store.RoleOwner, admin: store.RoleAdmin, member: store.RoleMember, stranger: ""}
		for p, role := range people {
			for _, action := range workspace.Actions {
				got, err := workspace.Check(ctx, st, ws.ID, p, action)
				if got != role {
					t.Fatalf("Check(%s) role = %q, want %q", action, got, role)
				}
				if allowed := err == nil; allowed != workspace.Can(role, action) {
					t.Fatalf("Check(%q, %s) = %v; want allowed %v", role, action, err, workspace.Can(role, action))
				}
				if err != nil && !errors.Is(err, workspace.ErrForbidden) {
					t.Fatalf("Check(%q, %s) = %v; want ErrForbidden", role, action, err)
				}
			}
		}
	})
}

// TestMayDecideByIdentity: the person behind a platform identity decides in
// a workspace as its owner or admin; a member, a person elsewhere and an
// identity with no person do not. Bound finds a team's workspace, or none.
func TestMayDecideByIdentity(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		mk := func(user string) *store.Person {
			p, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: store.Identity{Platform: "slack", Workspace: "TA", UserID: user}, DisplayName: user})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		owner, admin, member := mk("UOWN"), mk("UADM"), mk("UMEM")
		ws, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "A", Kind: store.WorkspaceTeam, OwnerPersonID: owner.ID})
		if err != nil {
			t.Fatal(err)
		}
		for p, r := range map[uuid.UUID]store.Role{admin.ID: store.RoleAdmin, member.ID: store.RoleMember} {
			if _, err := st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: p, Role: r}); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := workspace.Bound(ctx, st, "slack", "TA"); err != nil || got != nil {
			t.Fatalf("Bound before binding = %v, %v; want none", got, err)
		}
		if _, err := workspace.BindWorkspace(ctx, st, "slack", "TA", ws.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := workspace.Bound(ctx, st, "slack", "TA"); err != nil || got == nil || *got != ws.ID {
			t.Fatalf("Bound(TA) = %v, %v; want %s", got, err, ws.ID)
		}
		for user, want := range map[string]bool{"UOWN": true, "UADM": true, "UMEM": false, "UNOBODY": false} {
			got, err := workspace.MayDecide(ctx, st, store.Identity{Platform: "slack", Workspace: "TA", UserID: user}, ws.ID)
			if err != nil || got != want {
				t.Errorf("MayDecide(%s) = %v, %v; want %v", user, got, err, want)
			}
		}
	})
}
