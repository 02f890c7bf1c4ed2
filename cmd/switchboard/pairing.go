package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/switchboardhq/switchboard/core/access"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
)

const pairingUsage = `usage: switchboard pairing list
       switchboard pairing approve CODE`

// pairing lists the codes strangers were handed, or approves one, straight
// in the store: the service need not run, and a running one sees the
// approval at the person's next message.
func pairing(ctx context.Context, cfg app.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] == "approve" && len(args) != 2) || (args[0] == "list" && len(args) != 1) {
		return errors.New(pairingUsage)
	}
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	g, err := access.New(access.Options{Store: st, Logger: cfg.Logger})
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		ps, err := g.Pending(ctx)
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			fmt.Fprintln(stdout, "no pairing codes are waiting")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CODE\tPLATFORM\tUSER\tNAME\tWORKSPACE\tEXPIRES")
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Code, p.Platform, p.UserID, p.UserName, p.Workspace, p.ExpiresAt.Format("2006-01-02 15:04 UTC"))
		}
		return tw.Flush()
	case "approve":
		p, err := g.Approve(ctx, args[1], "operator")
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no pending pairing has the code %s (unknown, expired or approved already; see switchboard pairing list)", store.NormalizePairingCode(args[1]))
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "approved %s: they can talk to agents now\n", access.Describe(p))
		return nil
	}
	return fmt.Errorf("unknown pairing command %q\n%s", args[0], pairingUsage)
}
