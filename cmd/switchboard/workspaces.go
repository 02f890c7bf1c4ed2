package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
)

// The operator's workspace and agent-sharing commands. They act on the
// database directly, with every right (the operator's), and apply the
// migrations first like serve does.

const workspacesUsage = `usage: switchboard workspaces <command>

  create OWNER NAME             make a team workspace owned by the person OWNER (an id)
  list PERSON                   the workspaces a person belongs to, with their role
  show WS                       a workspace and its members
  add WS PERSON [admin|member]  add a member (default member)
  role WS PERSON admin|member   change a member's role (never the owner's)
  remove WS PERSON              remove a member (never the owner)
  delete WS                     delete a team workspace
  bind WS PLATFORM TEAM         bind a Slack team id or Discord guild id to WS
  retention WS                  how long WS keeps its conversations
  retention WS DAYS [DIR]       keep them DAYS days after their last activity, then delete them
                                (exported first to the server's directory DIR, when given)
  retention WS forever          keep them forever (the default)
`

const agentsUsage = `usage: switchboard agents <command>

  publish NAME          list an agent in the public directory (GET /api/directory)
  unpublish NAME        take it off
  pin NAME [WS...]      answer only in these workspaces; no WS unpins
  owner NAME [PERSON]   give an agent to a person; no PERSON gives it back to the operator
  show NAME             owner, pins and publication
  directory             the published agents
`

func openStore(ctx context.Context, cfg app.Config) (store.Store, error) {
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func ids(what string, args ...string) ([]uuid.UUID, error) {
	out := make([]uuid.UUID, len(args))
	for i, a := range args {
		id, err := uuid.Parse(a)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not an id (a UUID)", what, a)
		}
		out[i] = id
	}
	return out, nil
}

func workspacesCmd(ctx context.Context, cfg app.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, workspacesUsage)
		return errors.New("workspaces: no command given")
	}
	want := map[string][2]int{ // min and max arguments after the command
		"create": {2, 2}, "list": {1, 1}, "show": {1, 1}, "add": {2, 3},
		"role": {3, 3}, "remove": {2, 2}, "delete": {1, 1}, "bind": {3, 3},
		"retention": {1, 3},
	}
	n, ok := want[args[0]]
	if !ok || len(args)-1 < n[0] || len(args)-1 > n[1] {
		fmt.Fprint(stdout, workspacesUsage)
		return fmt.Errorf("workspaces %s: wrong command or arguments", args[0])
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	cmd, a := args[0], args[1:]
	first, err := ids("workspace or person", a[0])
	if err != nil {
		return err
	}
	// The operator acts with every right, through the same use cases as
	// the API's /api/workspaces.
	wss, op := workspace.NewService(st), workspace.TheOperator
	switch cmd {
	case "create":
		ws, err := wss.Create(ctx, first[0], a[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created team workspace %s %q, owned by %s\n", ws.ID, ws.Name, ws.OwnerPersonID)
	case "list":
		ms, err := wss.Memberships(ctx, op, first[0])
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tROLE\tNAME")
		for _, m := range ms {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Workspace.ID, m.Workspace.Kind, m.Role, m.Workspace.Name)
		}
		return tw.Flush()
	case "show":
		ws, ms, err := wss.Members(ctx, op, first[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %q (%s), owner %s\n", ws.ID, ws.Name, ws.Kind, ws.OwnerPersonID)
		for _, m := range ms {
			fmt.Fprintf(stdout, "  %s  %s\n", m.PersonID, m.Role)
		}
	case "add", "role":
		person, err := ids("person", a[1])
		if err != nil {
			return err
		}
		var role store.Role
		if len(a) == 3 {
			role = store.Role(a[2])
		}
		var m *store.WorkspaceMember
		if cmd == "role" {
			m, err = wss.SetRole(ctx, op, first[0], person[0], role)
		} else {
			m, err = wss.AddMember(ctx, op, first[0], person[0], role)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s is %s of %s\n", m.PersonID, m.Role, m.WorkspaceID)
	case "remove":
		person, err := ids("person", a[1])
		if err != nil {
			return err
		}
		if err := wss.RemoveMember(ctx, op, first[0], person[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s from %s\n", person[0], first[0])
	case "delete":
		if err := wss.Delete(ctx, op, first[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "deleted workspace %s\n", first[0])
	case "bind":
		b, err := wss.Bind(ctx, op, first[0], a[1], a[2])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s is bound to workspace %s\n", b.Platform, b.ExternalID, b.WorkspaceID)
	case "retention":
		return retentionCmd(ctx, wss, first[0], a[1:], stdout)
	}
	return nil
}

// retentionCmd shows or sets a workspace's retention: args are empty
// (show), "forever", or DAYS with an optional export directory.
func retentionCmd(ctx context.Context, wss *workspace.Service, ws uuid.UUID, args []string, stdout io.Writer) error {
	var r *store.WorkspaceRetention
	var err error
	if len(args) == 0 {
		r, err = wss.Retention(ctx, workspace.TheOperator, ws)
	} else {
		// DAYS without a directory exports nowhere: the directory set
		// before goes.
		c := workspace.RetentionChange{ExportDir: new(string)}
		if args[0] != "forever" {
			c.KeepDays, err = strconv.Atoi(args[0])
			if err != nil || c.KeepDays < 1 || c.KeepDays > store.MaxKeepDays {
				return fmt.Errorf("workspaces retention: DAYS %q must be a whole number of days from 1 to %d, or forever", args[0], store.MaxKeepDays)
			}
			if len(args) == 2 {
				*c.ExportDir = args[1]
			}
		} else if len(args) > 1 {
			return fmt.Errorf("workspaces retention: forever takes no export directory (nothing is deleted), got %q", args[1])
		}
		r, err = wss.SetRetention(ctx, workspace.TheOperator, ws, c)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, describeRetention(r))
	return nil
}

func describeRetention(r *store.WorkspaceRetention) string {
	if r.KeepDays == 0 {
		return fmt.Sprintf("workspace %s keeps its conversations forever", r.WorkspaceID)
	}
	s := fmt.Sprintf("workspace %s keeps its conversations %d days after their last activity, then deletes them", r.WorkspaceID, r.KeepDays)
	if r.ExportDir != "" {
		s += ", exported first to " + r.ExportDir
	}
	return s
}

func agentsCmd(ctx context.Context, cfg app.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "directory" && len(args) < 2) {
		fmt.Fprint(stdout, agentsUsage)
		return errors.New("agents: no command or agent given")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	wss, op := workspace.NewService(st), workspace.TheOperator
	if args[0] == "directory" {
		ls, err := wss.Directory(ctx)
		if err != nil {
			return err
		}
		for _, l := range ls {
			fmt.Fprintln(stdout, l.Name)
		}
		return nil
	}
	cmd, name, rest := args[0], args[1], args[2:]
	ag, err := st.AgentGetByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no agent named %q in the database (agents of switchboard.yaml are recorded when serve starts)", name)
	}
	if err != nil {
		return err
	}
	var sh *store.AgentSharing
	switch cmd {
	case "publish", "unpublish":
		_, sh, err = wss.Publish(ctx, op, ag.Name, cmd == "publish")
		if errors.Is(err, store.ErrPublishedPin) {
			return fmt.Errorf("cannot publish %s: %w", name, err)
		}
	case "pin":
		var pins []uuid.UUID
		if pins, err = ids("workspace", rest...); err == nil {
			_, sh, err = wss.Pin(ctx, op, ag.Name, pins)
		}
	case "owner":
		var owner *uuid.UUID
		if len(rest) > 0 {
			var p []uuid.UUID
			if p, err = ids("person", rest[0]); err != nil {
				return err
			}
			owner = &p[0]
		}
		_, sh, err = wss.SetOwner(ctx, op, ag.Name, owner)
	case "show":
		_, sh, err = wss.Sharing(ctx, op, ag.Name)
	default:
		fmt.Fprint(stdout, agentsUsage)
		return fmt.Errorf("agents: unknown command %q", cmd)
	}
	if err != nil {
		return err
	}
	owner := "the operator"
	if sh.OwnerPersonID != nil {
		owner = sh.OwnerPersonID.String()
	}
	fmt.Fprintf(stdout, "%s: owner %s, published %v, pinned to %v\n", name, owner, sh.Published, sh.Pins)
	return nil
}
