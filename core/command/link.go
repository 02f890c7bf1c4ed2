package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// link answers `link` with a one-time code, and `link CODE` by making the
// identity it is typed from and the code's one person. Both only in a DM:
// a code shown in a channel could be typed by anyone.
func (h *Handler) link(ctx context.Context, r request, args []string) (string, error) {
	if h.opts.Links == nil {
		return "", invalid("linking accounts is not available here")
	}
	if !r.IsDM {
		return "", invalid("`link` works in a direct message with me only")
	}
	switch len(args) {
	case 0:
		code, err := h.opts.Links.LinkStart(ctx, r.Platform, r.Workspace, r.UserID)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Your link code is `%s`. Within %d minutes, send `!link %s` to me in a DM on your other platform (Slack or Discord) to make both accounts one person. It works once.",
			code, int(core.LinkCodeTTL.Minutes()), code), nil
	case 1:
		p, err := h.opts.Links.LinkFinish(ctx, r.Platform, r.Workspace, r.UserID, args[0])
		if errors.Is(err, core.ErrLinkCode) {
			return "", invalid("%s", err.Error())
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Linked: your accounts on %s are now one person%s.", platformsOf(p.Identities), nameSuffix(p.DisplayName)), nil
	}
	return "", invalid("`link` takes no argument (to get a code) or one code")
}

func platformsOf(ids []*store.PersonIdentity) string {
	var names []string
	for _, id := range ids {
		if !slices.Contains(names, id.Platform) {
			names = append(names, id.Platform)
		}
	}
	return strings.Join(names, " and ")
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return ", " + name
}

// login answers `login` with a one-time link to the web console, in a DM
// or a reply only the person sees: whoever holds the link signs in as them.
func (h *Handler) login(ctx context.Context, r request) (string, error) {
	if h.opts.Logins == nil {
		return "", invalid("the web console is not served here")
	}
	if !r.IsDM && !r.Private {
		return "", invalid("`login` works in a direct message with me only: a sign-in link shown in a channel could be used by anyone")
	}
	link, ttl, err := h.opts.Logins.LoginLink(ctx, r.Platform, r.Workspace, r.UserID)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Sign in to the Switchboard console: %s\nThe link works once, within %d minutes. Don't share it: it signs in as you.", link, int(ttl.Minutes())), nil
}
