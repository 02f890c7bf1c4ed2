package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
)

// The operator's command on people's data: forgetting a person on request.

const peopleUsage = `usage: switchboard people <command>

  forget PERSON [-delete-messages]
        delete a person's data: their records (and the ones merged with them),
        platform identities, tokens, sessions and login links, GitHub and Google
        connections, DM pairings, standing grants they made, their personal
        workspace's notes and their memberships. What they wrote stays in the
        conversations as "deleted user"; -delete-messages blanks its text too.
        Running it again changes nothing.
`

// peopleArgs are the people command's flags.
type peopleArgs struct {
	deleteMessages bool
}

// peopleCmd runs people SUB ARGS...: args are the positional arguments,
// the subcommand first.
func peopleCmd(ctx context.Context, cfg app.Config, pa peopleArgs, args []string, stdout io.Writer) error {
	if len(args) != 2 || args[0] != "forget" {
		fmt.Fprint(stdout, peopleUsage)
		return errors.New("people: say forget PERSON")
	}
	person, err := ids("person", args[1])
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := st.PersonForget(ctx, &store.PersonForgetParams{PersonID: person[0], DeleteMessages: pa.deleteMessages, By: "operator"})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, describeForget(person[0].String(), res, pa.deleteMessages))
	return nil
}

func describeForget(person string, r *store.PersonForgetResult, redacted bool) string {
	if *r == (store.PersonForgetResult{}) {
		return fmt.Sprintf("nothing left of person %s to forget (unknown, or forgotten before)", person)
	}
	kept := "their text kept"
	if redacted {
		kept = "their text deleted"
	}
	return fmt.Sprintf("forgot person %s: %d person records, %d identities, %d entries now by %q (%s), "+
		"%d tokens, %d sessions and login links, %d connections, %d pairings, %d grants, %d notes, %d memberships",
		person, r.People, r.Identities, r.Entries, store.DeletedUserName, kept,
		r.APIKeys, r.Logins, r.Connections, r.Pairings, r.Grants, r.Notes, r.Memberships)
}

// parseInterspersed parses fs's flags wherever they stand among the
// positional arguments (people forget PERSON -delete-messages) and
// returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}
