package tool

import (
	"context"

	"github.com/google/uuid"
)

// ContextName names where a conversation runs. It picks the tools offered
// (package headless swaps frontend tools per context) and scopes the
// guard's deny entries ("slack:send_email").
type ContextName string

// The contexts a conversation runs in. A conversation that a platform
// adapter opened runs in the context named after its platform.
const (
	ContextWeb       ContextName = "web"       // a browser client: runs frontend tools
	ContextAPI       ContextName = "api"       // an SDK client: runs frontend tools
	ContextSlack     ContextName = "slack"     // a Slack thread or DM
	ContextDiscord   ContextName = "discord"   // a Discord channel, thread or DM
	ContextTelegram  ContextName = "telegram"  // a Telegram chat, topic or reply thread
	ContextMatrix    ContextName = "matrix"    // a Matrix room, thread or direct chat
	ContextTerminal  ContextName = "terminal"  // the console client
	ContextScheduler ContextName = "scheduler" // a routine, reminder, pulse or goal loop: nobody is watching
	ContextMCP       ContextName = "mcp"       // a call of an MCP client: it waits for the answer but runs no tools
)

// Contexts lists every known context.
func Contexts() []ContextName {
	return []ContextName{ContextWeb, ContextAPI, ContextSlack, ContextDiscord, ContextTelegram, ContextMatrix, ContextTerminal, ContextScheduler, ContextMCP}
}

// Request tells a handler on whose behalf its call runs: tools such as
// remind or a routine's report need the conversation, the agent and the
// person who started the conversation. The engine fills it for every call;
// a handler never sees a nil Request.
type Request struct {
	// CallID is the idempotency key of the call: the model's id for it,
	// unique in the conversation and the same however often the turn is
	// resumed. The engine starts a call at most once (an interrupted call is
	// reported to the model, never re-run), but a tool with side effects
	// elsewhere should pass CallID on (as an Idempotency-Key header, a
	// request id, a unique column) so that the far side can tell a repeat
	// even across its own retries.
	CallID         string
	ConversationID uuid.UUID
	Agent          string
	AgentID        *uuid.UUID // nil when the agent has no store row yet
	Context        ContextName
	// Starter is the person who started the conversation, "" when unknown.
	Starter string
	// Speaker is the person whose message started the turn (their store
	// id), resolved from the platform identity; nil when no known person
	// spoke (a scheduled run, the operator). Accounts an agent acts with
	// are resolved from it and WorkspaceID, never from the agent.
	Speaker *uuid.UUID
	// WorkspaceID is the workspace the conversation belongs to; nil when
	// none.
	WorkspaceID *uuid.UUID
	// TurnID is the work item of the turn; a resumed turn keeps it.
	TurnID uuid.UUID
	// Dir is the worktree of the coding step the call belongs to, the
	// only folder its file tools may touch; "" outside a coding step.
	Dir string
}

// Handler runs one call of a tool: req says on whose behalf, in is the
// model's arguments, validated against the schema generated from In and
// decoded. Its error goes back to the model as an error result (or pauses
// the call, see PauseWith); Out is encoded as the result.
type Handler[In, Out any] func(ctx context.Context, req *Request, in In) (Out, error)
