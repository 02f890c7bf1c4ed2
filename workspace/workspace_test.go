package workspace_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/workspace"
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
