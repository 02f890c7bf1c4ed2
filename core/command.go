package core

import (
	"context"

	"github.com/google/uuid"
)

// Command is a command for the bot, answered without a model call: typed
// as a message that starts with CommandPrefix ("!remind in 2h -- call
// Ana"), or filled in through a platform's own command form (Discord's
// /remind). Both reach the same CommandFunc.
type Command struct {
	// Text is the command as typed, without the prefix. A form gives its
	// name ("remind").
	Text string
	// Fields are a form's values by option name ("when", "what"); nil for
	// a typed command.
	Fields map[string]string
	// ConversationID is the conversation the command was typed in
	// (uuid.Nil for a form outside one).
	ConversationID uuid.UUID
	// Private is true when only the person who typed the command sees the
	// reply (a Slack slash command's or a Discord interaction's ephemeral
	// answer), as in a DM.
	Private bool
}

// CommandFunc answers a command of the person who sent in and returns the
// reply to show them. A malformed command is answered, not failed: the
// error is for what went wrong on the server's side.
type CommandFunc func(ctx context.Context, in *Inbound, cmd *Command) (string, error)
