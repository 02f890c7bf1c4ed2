package core

import "github.com/switchboardhq/switchboard/core/workspace"

// Workspaces is workspace administration on the service's store: creating
// workspaces, their members and roles, bindings, retention and where
// agents answer, each under the roles of core/workspace. The HTTP API and
// the CLI (on a store of its own, with workspace.NewService) call the same
// methods.
func (s *Service) Workspaces() *workspace.Service { return workspace.NewService(s.st) }
