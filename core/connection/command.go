package connection

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// CommandHelp lists the connection commands.
const CommandHelp = "• `connections` lists the GitHub and Google accounts connected for you and the workspaces you manage · " +
	"`connections connect github|google` (in a DM) gives you a link to connect your own · " +
	"`connections connect github|google workspace [ID]` connects one for a workspace you manage · `connections disconnect <id>`"

// Chat is who typed !connections, where.
type Chat struct {
	PersonID uuid.UUID
	// Workspace is the workspace the conversation belongs to; nil when none.
	Workspace *uuid.UUID
	IsDM      bool
}

// Refusal is a !connections answer to show as it is: the command was
// malformed or not allowed.
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &Refusal{msg: fmt.Sprintf(format, args...)} }

// Answer runs `connections [list | connect PROVIDER [workspace [ID]] |
// disconnect ID]` for the person who typed it. Start links are given only
// in a direct message: a link shown in a channel could be opened by
// someone else first.
func (m *Manager) Answer(ctx context.Context, c Chat, args []string) (string, error) {
	v := Viewer{PersonID: c.PersonID}
	sub := ""
	if len(args) > 0 {
		sub = strings.ToLower(args[0])
	}
	switch {
	case sub == "" || (sub == "list" && len(args) == 1):
		return m.answerList(ctx, v)
	case sub == "disconnect" && len(args) == 2:
		id, err := uuid.Parse(args[1])
		if err != nil {
			return "", refuse("%q is not a connection id; `!connections` lists them", args[1])
		}
		conn, err := m.Disconnect(ctx, v, id)
		if errors.Is(err, store.ErrNotFound) {
			return "", refuse("no connection %s that you manage", id)
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Disconnected %s account %s: agents no longer act with it, and its grant was revoked at %s.", m.title(conn.Provider), conn.Account, m.title(conn.Provider)), nil
	case sub == "connect" && len(args) >= 2 && len(args) <= 4:
		return m.answerConnect(ctx, c, args[1:])
	}
	return "", refuse("use %s", CommandHelp)
}

func (m *Manager) title(p store.ConnectionProvider) string {
	if pr, ok := m.providers[p]; ok {
		return pr.Title
	}
	return string(p)
}

func (m *Manager) answerList(ctx context.Context, v Viewer) (string, error) {
	cs, err := m.List(ctx, v)
	if err != nil {
		return "", err
	}
	if len(cs) == 0 {
		return "No accounts are connected for you or the workspaces you manage. Send me `!connections connect github` (or google) in a DM to connect yours.", nil
	}
	var b strings.Builder
	b.WriteString("Connected accounts (disconnect with `!connections disconnect <id>`):")
	for _, c := range cs {
		whose := "yours"
		if c.Owner.WorkspaceID != nil {
			whose = "workspace " + c.Owner.WorkspaceID.String()
			if ws, err := m.o.Store.WorkspaceGet(ctx, *c.Owner.WorkspaceID); err == nil && ws.Name != "" {
				whose = "workspace " + ws.Name
			}
		}
		fmt.Fprintf(&b, "\n• `%s` — %s %s, %s, connected %s", c.ID, m.title(c.Provider), c.Account, whose, c.UpdatedAt.Format("2006-01-02"))
	}
	return b.String(), nil
}

func (m *Manager) answerConnect(ctx context.Context, c Chat, args []string) (string, error) {
	provider := store.ConnectionProvider(strings.ToLower(args[0]))
	if _, ok := m.providers[provider]; !ok {
		return "", refuse("%s is not set up here; the providers are %v", args[0], m.Providers())
	}
	var ws *uuid.UUID
	if len(args) > 1 {
		if !strings.EqualFold(args[1], "workspace") {
			return "", refuse("use `connections connect %s` or `connections connect %s workspace [ID]`", provider, provider)
		}
		switch {
		case len(args) == 3:
			id, err := uuid.Parse(args[2])
			if err != nil {
				return "", refuse("%q is not a workspace id", args[2])
			}
			ws = &id
		case c.Workspace != nil:
			ws = c.Workspace
		default:
			return "", refuse("this conversation belongs to no workspace: name one, `connections connect %s workspace <ID>`", provider)
		}
	}
	if !c.IsDM {
		if ws != nil {
			return "", refuse("I give connect links in a direct message only: send me `!connections connect %s workspace %s` in a DM", provider, *ws)
		}
		return "", refuse("I give connect links in a direct message only: send me `!connections connect %s` in a DM", provider)
	}
	link, err := m.StartLink(ctx, provider, c.PersonID, ws)
	if errors.Is(err, ErrForbidden) {
		return "", refuse("%v", err)
	}
	if err != nil {
		return "", err
	}
	whose := "your own " + m.title(provider) + " account"
	if ws != nil {
		whose = "a " + m.title(provider) + " account for workspace " + ws.String()
	}
	return fmt.Sprintf("Open this link to connect %s (it works once, for 15 minutes): %s", whose, link), nil
}
