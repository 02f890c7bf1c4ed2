package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
)

type grantsArgs struct {
	sub       string // list or revoke
	workspace string
	revoked   bool
}

// grants lists or revokes standing grants straight in the store: the
// guard reads them at every call, so a running service sees a revoke at
// once.
func grants(ctx context.Context, cfg app.Config, g grantsArgs, rest []string, stdout io.Writer) error {
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	switch {
	case g.sub == "list" && len(rest) == 0:
		p := &store.GrantListParams{Revoked: g.revoked, Limit: 1000}
		if id, err := uuid.Parse(g.workspace); err == nil {
			p.WorkspaceID = &id
		} else if g.workspace != "" {
			p.Workspace = &g.workspace
		}
		gs, err := st.GrantList(ctx, p)
		if err != nil {
			return err
		}
		if len(gs) == 0 {
			fmt.Fprintln(stdout, "no standing grants")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAGENT\tTOOL\tWORKSPACE\tARGUMENTS\tGRANTED BY\tCREATED\tREVOKED")
		for _, x := range gs {
			args, revoked := "any", "-"
			if x.ArgsHash != "" {
				args = "sha256:" + x.ArgsHash[:12]
			}
			if x.RevokedAt != nil {
				revoked = x.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.ID, x.Agent, x.Tool, grantWorkspace(x), args, x.GrantedBy, x.CreatedAt.Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	case g.sub == "revoke" && len(rest) == 1:
		id, err := uuid.Parse(rest[0])
		if err != nil {
			return fmt.Errorf("grants revoke: %q is not a grant id", rest[0])
		}
		x, err := st.GrantRevoke(ctx, &store.GrantRevokeParams{ID: id})
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("grants revoke: no grant %s", id)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s: %s must ask again before running %s\n", x.ID, x.Agent, x.Tool)
		return nil
	}
	return errors.New("grants: use 'grants list [-workspace ID] [-revoked]' or 'grants revoke ID'")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// grantWorkspace names where a grant holds: its workspace's name and the
// platform workspace it was made in.
func grantWorkspace(g *store.Grant) string {
	switch {
	case g.WorkspaceName != "" && g.Workspace != "":
		return g.WorkspaceName + " (" + g.Workspace + ")"
	case g.WorkspaceName != "":
		return g.WorkspaceName
	}
	return orDash(g.Workspace)
}
