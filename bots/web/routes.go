package web

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// The route table: every endpoint of the API, with what it takes and what
// it answers. Routes registers the mux from it, so an endpoint cannot be
// served without an entry, and the OpenAPI document (openapi.json, served
// at GET /api/openapi.json) and docs/reference/http.md are generated from
// it and the Go types it names (see openapi_test.go); a test drives the
// handlers and checks their answers against the document.

// Auth says who may call a route.
type Auth int

const (
	// AuthAPI is any principal the API admits: the operator (or, without
	// SWITCHBOARD_API_TOKEN, a direct loopback caller), a person's token
	// or console session, an agent's session. The handler narrows it: a
	// person to the workspaces they may use, an agent to its own
	// conversations.
	AuthAPI Auth = iota
	// AuthOperator is the operator only; anyone else gets 403.
	AuthOperator
	// AuthExchange is an agent key or a host token, exchanged for a
	// session; no other credential is taken.
	AuthExchange
	// AuthSignIn needs no credential: the console's sign-in, a JSON body
	// from a page of this site.
	AuthSignIn
	// AuthNone is anyone.
	AuthNone
)

// String names the rule in the reference.
func (a Auth) String() string {
	switch a {
	case AuthOperator:
		return "operator"
	case AuthExchange:
		return "agent key or host token"
	case AuthSignIn:
		return "none (sign-in)"
	case AuthNone:
		return "none"
	}
	return "any principal"
}

// Param is a query parameter (or, with In "header", a request header) of
// a route.
type Param struct {
	Name     string
	In       string // "query" (the default) or "header"
	Type     string // "string" (the default), "integer" or "boolean"
	Enum     []string
	Required bool
	Doc      string
}

// Route is one endpoint of the API.
type Route struct {
	Method string
	// Path is the path of its ServeMux pattern: /api/conversations/{id}.
	Path string
	// ID is its OpenAPI operationId; Summary and Tag describe it.
	ID      string
	Summary string
	Tag     string
	Auth    Auth
	// Body is a value of the type of its JSON body (nil: it takes none);
	// with BodyOptional the body may be empty (the JSON Content-Type is
	// still required). BodyMedia are media types taken instead of JSON.
	Body         any
	BodyOptional bool
	BodyMedia    []string
	Query        []Param
	// Status is the status of a successful answer, and Answer a value of
	// the type of its JSON body (nil: it has none). Text is the media type
	// of an answer that is not JSON: the only one when Answer is nil, else
	// what a query parameter asks for instead of JSON.
	Status int
	Answer any
	Text   string
	// Lines, with Text a JSON-lines media type, is a value of the type of
	// each line.
	Lines any
	// Enabled, when set, says whether an API built with these options
	// serves the route (a part the server may not have).
	Enabled func(*Options) bool

	handler func(*API, http.ResponseWriter, *http.Request) error
}

// Pattern is the route's ServeMux pattern: "GET /api/conversations/{id}".
func (rt *Route) Pattern() string { return rt.Method + " " + rt.Path }

// RouteTable is every route of the API, whatever the options.
func RouteTable() []Route { return slices.Clone(routes) }

// Mux is where Routes registers the API: an *http.ServeMux.
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Routes registers the API's routes on mux: those of the table that the
// options enable, and the answer to CORS preflights.
func (a *API) Routes(mux Mux) {
	for i := range routes {
		rt := &routes[i]
		if rt.Enabled != nil && !rt.Enabled(&a.opts) {
			continue
		}
		mux.Handle(rt.Pattern(), a.serve(rt))
	}
	// CORS preflights of allowed origins are answered here; those of other
	// sites are refused with a reason instead of a bare 405. Not an
	// operation of the API, so not in the table.
	mux.Handle("OPTIONS /api/", a.handle(func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
	a.oidcRoutes(mux)
}

// serve wraps a route's handler in the checks its Auth calls for.
func (a *API) serve(rt *Route) http.Handler {
	h := func(w http.ResponseWriter, r *http.Request) error { return rt.handler(a, w, r) }
	switch rt.Auth {
	case AuthExchange:
		return a.handleRoute(routeExchange, h)
	case AuthSignIn:
		return a.authHandler(h)
	case AuthNone:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				a.fail(w, r, err)
			}
		})
	}
	return a.handle(h)
}

// Each part the server may not have enables its routes.
func withGrants(o *Options) bool        { return o.Grants != nil }
func withSignIn(o *Options) bool        { return o.SignIn != nil }
func withSchedules(o *Options) bool     { return o.Schedules != nil }
func withRulebooks(o *Options) bool     { return o.Rulebooks != nil }
func withSkills(o *Options) bool        { return o.Skills != nil }
func withPairings(o *Options) bool      { return o.Pairings != nil }
func withPersonalities(o *Options) bool { return o.Personalities != nil }
func withConnections(o *Options) bool   { return o.Connections != nil }
func withCompare(o *Options) bool       { return o.Compare != nil }
func withMCPStatus(o *Options) bool     { return o.MCPStatus != nil }
func withConfigStatus(o *Options) bool  { return o.ConfigStatus != nil }

const (
	mediaMarkdown = "text/markdown"
	mediaPlain    = "text/plain"
	mediaSSE      = "text/event-stream"
	// mediaJSONLines is JSON lines: one JSON value a line (Route.Lines).
	mediaJSONLines = "application/jsonl"
)

var (
	limitParam = func(max int, def int) Param {
		return Param{Name: "limit", Type: "integer", Doc: "at most this many (1 to " + strconv.Itoa(max) + "; default " + strconv.Itoa(def) + ")"}
	}
	formatParam = Param{Name: "format", Enum: []string{"json", "md"}, Doc: "json (the default) or md, Markdown"}
	agentParam  = Param{Name: "agent", Doc: "one agent's skills; without it, the operator's"}
)

// routes is the table, in the order of the reference.
var routes = []Route{
	// Conversations.
	{Method: "POST", Path: "/api/conversations", ID: "createConversation", Tag: "conversations", Summary: "Open a conversation with an agent (the default agent when none is named)",
		Body: CreateConversationRequest{}, BodyOptional: true, Status: http.StatusCreated, Answer: ConversationJSON{}, handler: (*API).create},
	{Method: "GET", Path: "/api/conversations/{id}", ID: "getConversation", Tag: "conversations", Summary: "A conversation: its state, forks, pending calls and the approvals waiting for a person",
		Query:  []Param{{Name: "at", Type: "integer", Doc: "time travel: the status, pending calls and approvals as they were when this seq was written"}},
		Status: http.StatusOK, Answer: ConversationDetail{}, handler: (*API).get},
	{Method: "POST", Path: "/api/conversations/{id}/messages", ID: "postMessage", Tag: "conversations", Summary: "Post a message; a turn answers it",
		Body: MessageRequest{}, Status: http.StatusAccepted, Answer: PostedJSON{}, handler: (*API).message},
	{Method: "GET", Path: "/api/conversations/{id}/stream", ID: "streamConversation", Tag: "conversations", Summary: "Follow a conversation as Server-Sent Events: the log past the cursor, then live",
		Query: []Param{
			{Name: "cursor", Type: "integer", Doc: "start after this seq"},
			{Name: "tail", Type: "integer", Doc: "start with the newest N entries (0 to 10000)"},
			{Name: "Last-Event-ID", In: "header", Type: "integer", Doc: "a reconnect: resume after this seq (overrides cursor and tail)"},
		},
		Status: http.StatusOK, Text: mediaSSE, handler: (*API).stream},
	{Method: "GET", Path: "/api/conversations/{id}/voice", ID: "voiceConversation", Tag: "conversations", Summary: "Talk with the conversation's agent: a WebSocket carrying the microphone's PCM (16-bit, 16 kHz, mono) and control messages in, transcripts, the reply and its spoken audio out (docs/voice-console.md)",
		Status: http.StatusSwitchingProtocols, Enabled: withVoice, handler: (*API).voiceSocket},
	{Method: "POST", Path: "/api/conversations/{id}/tool-results", ID: "postToolResults", Tag: "conversations", Summary: "Post the results of frontend tool calls; the paused turn resumes",
		Body: ToolResultsRequest{}, Status: http.StatusAccepted, Answer: PostedJSON{}, handler: (*API).toolResults},
	{Method: "POST", Path: "/api/conversations/{id}/fork", ID: "forkConversation", Tag: "conversations", Summary: "Edit an earlier message: a new conversation seeded with the entries before seq",
		Body: ForkRequest{}, Status: http.StatusCreated, Answer: ForkedJSON{}, handler: (*API).fork},
	{Method: "GET", Path: "/api/conversations/{id}/entries", ID: "listEntries", Tag: "conversations", Summary: "The log, or the log as it was at a seq",
		Query: []Param{
			{Name: "at", Type: "integer", Doc: "the log up to this seq"},
			{Name: "errors", Enum: []string{"0", "1"}, Doc: "0 leaves out error entries (they have no seq)"},
		},
		Status: http.StatusOK, Answer: EntryList{}, handler: (*API).entries},
	{Method: "GET", Path: "/api/conversations/{id}/forks", ID: "getForkTree", Tag: "conversations", Summary: "The conversation's place in its fork tree, and the tree from its root",
		Status: http.StatusOK, Answer: ForkTree{}, handler: (*API).forkTree},
	{Method: "GET", Path: "/api/conversations/{id}/side-threads", ID: "listSideThreads", Tag: "conversations", Summary: "The side threads opened in a conversation, and its delegations",
		Status: http.StatusOK, Answer: SideThreadList{}, handler: (*API).listSideThreads},
	{Method: "GET", Path: "/api/delegations/{id}", ID: "getDelegation", Tag: "conversations", Summary: "A delegated task, with the factors of its choice",
		Status: http.StatusOK, Answer: DelegationJSON{}, handler: (*API).getDelegation},
	{Method: "GET", Path: "/api/conversations/{id}/rules", ID: "getRulebook", Tag: "conversations", Summary: "A conversation's rulebook",
		Status: http.StatusOK, Answer: RulebookJSON{}, Enabled: withRulebooks, handler: (*API).getRulebook},
	{Method: "PUT", Path: "/api/conversations/{id}/rules", ID: "putRulebook", Tag: "conversations", Summary: "Replace a conversation's rulebook (an empty text clears it)",
		Body: TextRequest{}, Status: http.StatusOK, Answer: RulebookJSON{}, Enabled: withRulebooks, handler: (*API).putRulebook},

	// The history.
	{Method: "GET", Path: "/api/conversations", ID: "listConversations", Tag: "history", Summary: "The conversations the caller may see, searched and filtered, a page at a time",
		Query: []Param{
			{Name: "q", Doc: "words of the title or the text"},
			{Name: "agent", Doc: "an agent's name"},
			{Name: "platform", Doc: "slack, discord, web, ..."},
			{Name: "folder", Doc: "a folder id, or none"},
			{Name: "archived", Enum: []string{"false", "true", "all"}, Doc: "false (the default), true or all"},
			{Name: "sort", Enum: []string{"activity", "created", "title"}, Doc: "activity (the default), created or title"},
			{Name: "offset", Type: "integer", Doc: "skip this many"},
			{Name: "before", Doc: "the next of the previous page"},
			limitParam(200, 50),
		},
		Status: http.StatusOK, Answer: HistoryPage{}, handler: (*API).historyList},
	{Method: "PATCH", Path: "/api/conversations/{id}", ID: "fileConversation", Tag: "history", Summary: "Rename, archive or file a conversation",
		Body: FileRequest{}, Status: http.StatusOK, Answer: ListingJSON{}, handler: (*API).historyPatch},
	{Method: "DELETE", Path: "/api/conversations/{id}", ID: "deleteConversation", Tag: "history", Summary: "Delete a conversation",
		Status: http.StatusNoContent, handler: (*API).historyDelete},
	{Method: "GET", Path: "/api/conversations/{id}/export", ID: "exportConversation", Tag: "history", Summary: "Export a conversation, as JSON or Markdown",
		Query: []Param{formatParam}, Status: http.StatusOK, Answer: transcript.Doc{}, Text: mediaMarkdown, handler: (*API).historyExport},
	{Method: "POST", Path: "/api/conversations/import", ID: "importConversation", Tag: "history", Summary: "Import an export (JSON, or {\"markdown\": ...}) as a new conversation",
		Body: ImportRequest{}, Status: http.StatusCreated, Answer: ListingJSON{}, handler: (*API).historyImport},
	{Method: "POST", Path: "/api/conversations/bulk", ID: "bulkConversations", Tag: "history", Summary: "Export, delete, archive, unarchive or move several conversations at once",
		Body: BulkRequest{}, Status: http.StatusOK, Answer: BulkResult{}, Text: mediaMarkdown, handler: (*API).historyBulk},
	{Method: "GET", Path: "/api/folders", ID: "listFolders", Tag: "history", Summary: "The folders of the workspaces the caller sees",
		Status: http.StatusOK, Answer: FolderList{}, handler: (*API).folderList},
	{Method: "POST", Path: "/api/folders", ID: "createFolder", Tag: "history", Summary: "Make a folder",
		Body: FolderRequest{}, Status: http.StatusCreated, Answer: FolderJSON{}, handler: (*API).folderCreate},
	{Method: "PATCH", Path: "/api/folders/{folder}", ID: "updateFolder", Tag: "history", Summary: "Rename or recolour a folder",
		Body: FolderPatchRequest{}, Status: http.StatusOK, Answer: FolderJSON{}, handler: (*API).folderPatch},
	{Method: "DELETE", Path: "/api/folders/{folder}", ID: "deleteFolder", Tag: "history", Summary: "Delete a folder; its conversations stay, in none",
		Status: http.StatusNoContent, handler: (*API).folderDelete},

	// Approvals.
	{Method: "GET", Path: "/api/approvals", ID: "listApprovals", Tag: "approvals", Summary: "The confirmations and questions waiting in the conversations the caller may see, oldest first",
		Status: http.StatusOK, Answer: ApprovalList{}, handler: (*API).approvalList},
	{Method: "GET", Path: "/api/approvals/{id}", ID: "getApproval", Tag: "approvals", Summary: "A call waiting for a person",
		Status: http.StatusOK, Answer: ApprovalJSON{}, handler: (*API).getApproval},
	{Method: "POST", Path: "/api/approvals/{id}", ID: "decideApproval", Tag: "approvals", Summary: "Decide an approval by its id",
		Body: ChoiceRequest{}, Status: http.StatusOK, Answer: ApprovalJSON{}, handler: (*API).decideApproval},
	{Method: "POST", Path: "/api/conversations/{id}/decide", ID: "decideCall", Tag: "approvals", Summary: "Decide the approval of a conversation's call",
		Body: DecideRequest{}, Status: http.StatusOK, Answer: ApprovalJSON{}, handler: (*API).decide},
	{Method: "GET", Path: "/api/grants", ID: "listGrants", Tag: "approvals", Summary: "The standing grants that hold", Auth: AuthOperator,
		Query: []Param{
			{Name: "workspace_id", Doc: "a workspace's grants"},
			{Name: "workspace", Doc: "the grants of no workspace made in this platform workspace (a Slack team)"},
		},
		Status: http.StatusOK, Answer: GrantList{}, Enabled: withGrants, handler: (*API).listGrants},
	{Method: "DELETE", Path: "/api/grants/{id}", ID: "revokeGrant", Tag: "approvals", Summary: "Revoke a standing grant", Auth: AuthOperator,
		Status: http.StatusOK, Answer: grantJSON{}, Enabled: withGrants, handler: (*API).revokeGrant},

	// Runs and the work graph.
	{Method: "GET", Path: "/api/runs", ID: "listRuns", Tag: "runs", Summary: "Runs of plans, newest first",
		Query: []Param{
			{Name: "status", Enum: []string{"running", "done", "failed", "cancelled"}},
			{Name: "conversation", Doc: "the runs of one conversation"},
			limitParam(500, 50),
		},
		Status: http.StatusOK, Answer: RunList{}, handler: (*API).listRuns},
	{Method: "POST", Path: "/api/runs", ID: "startRun", Tag: "runs", Summary: "Start a run of a lead agent's plan, in a new conversation of the lead's",
		Body: StartRunRequest{}, Status: http.StatusCreated, Answer: RunJSON{}, handler: (*API).startRun},
	{Method: "GET", Path: "/api/runs/{id}", ID: "getRun", Tag: "runs", Summary: "A run with its steps",
		Status: http.StatusOK, Answer: RunJSON{}, handler: (*API).getRun},
	{Method: "GET", Path: "/api/runs/{id}/events", ID: "listRunEvents", Tag: "runs", Summary: "A run's events, oldest first",
		Query:  []Param{{Name: "after", Type: "integer", Doc: "the events after this event id"}},
		Status: http.StatusOK, Answer: RunEventList{}, handler: (*API).runEvents},
	{Method: "POST", Path: "/api/runs/{id}/cancel", ID: "cancelRun", Tag: "runs", Summary: "Cancel a run",
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: RunJSON{}, handler: (*API).cancelRun},
	{Method: "POST", Path: "/api/runs/{id}/retry", ID: "retryRun", Tag: "runs", Summary: "Retry a run's failed steps",
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: RunJSON{}, handler: (*API).retryRun},
	{Method: "GET", Path: "/api/graph", ID: "getWorkGraph", Tag: "runs", Summary: "The work graph around a conversation: forks, side threads, delegations, runs and their agents",
		Query:  []Param{{Name: "c", Required: true, Doc: "the conversation's id"}},
		Status: http.StatusOK, Answer: WorkGraph{}, handler: (*API).graph},

	// Artifacts.
	{Method: "GET", Path: "/api/artifacts", ID: "listArtifacts", Tag: "artifacts", Summary: "Artifacts agents made, newest first",
		Query: []Param{
			{Name: "type", Doc: "code, document, ..."},
			{Name: "conversation", Doc: "one conversation's (required of an agent's session)"},
			{Name: "q", Doc: "words of the title or content"},
			limitParam(200, 50),
		},
		Status: http.StatusOK, Answer: ArtifactList{}, handler: (*API).artifactList},
	{Method: "GET", Path: "/api/artifacts/{artifact}", ID: "getArtifact", Tag: "artifacts", Summary: "An artifact: its content, every version and the comments",
		Status: http.StatusOK, Answer: ArtifactDetail{}, handler: (*API).artifactGet},
	{Method: "GET", Path: "/api/artifacts/{artifact}/versions/{n}", ID: "getArtifactVersion", Tag: "artifacts", Summary: "One version of an artifact",
		Status: http.StatusOK, Answer: ArtifactVersionContent{}, handler: (*API).artifactVersion},
	{Method: "GET", Path: "/api/artifacts/{artifact}/diff", ID: "diffArtifact", Tag: "artifacts", Summary: "The unified diff between two versions",
		Query: []Param{
			{Name: "from", Type: "integer", Doc: "default: the version before to"},
			{Name: "to", Type: "integer", Doc: "default: the current version"},
		},
		Status: http.StatusOK, Text: mediaPlain, handler: (*API).artifactDiff},
	{Method: "POST", Path: "/api/artifacts/{artifact}/comments", ID: "commentArtifact", Tag: "artifacts", Summary: "Comment on a version of an artifact",
		Body: CommentRequest{}, Status: http.StatusCreated, Answer: ArtifactCommentJSON{}, handler: (*API).artifactComment},

	// Schedules.
	{Method: "GET", Path: "/api/schedules", ID: "listSchedules", Tag: "schedules", Summary: "Every routine, pulse, reminder and loop", Auth: AuthOperator,
		Status: http.StatusOK, Answer: ScheduleList{}, Enabled: withSchedules, handler: (*API).scheduleList},
	{Method: "POST", Path: "/api/schedules/{schedule}/pause", ID: "pauseSchedule", Tag: "schedules", Summary: "Pause a schedule", Auth: AuthOperator,
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: scheduleJSON{}, Enabled: withSchedules, handler: (*API).scheduleState},
	{Method: "POST", Path: "/api/schedules/{schedule}/resume", ID: "resumeSchedule", Tag: "schedules", Summary: "Resume a paused schedule", Auth: AuthOperator,
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: scheduleJSON{}, Enabled: withSchedules, handler: (*API).scheduleState},
	{Method: "POST", Path: "/api/schedules/{schedule}/run", ID: "runSchedule", Tag: "schedules", Summary: "Run a schedule once now", Auth: AuthOperator,
		Body: Empty{}, BodyOptional: true, Status: http.StatusAccepted, Answer: runNowJSON{}, Enabled: withSchedules, handler: (*API).scheduleRunNow},

	// Workspaces and agents.
	{Method: "POST", Path: "/api/workspaces", ID: "createWorkspace", Tag: "workspaces", Summary: "Make a team workspace",
		Body: WorkspaceRequest{}, Status: http.StatusCreated, Answer: workspaceJSON{}, handler: (*API).workspaceCreate},
	{Method: "GET", Path: "/api/workspaces", ID: "listWorkspaces", Tag: "workspaces", Summary: "The workspaces of a person, with their role",
		Query:  []Param{{Name: "person", Doc: "the person (the operator names one; a person gets their own)"}},
		Status: http.StatusOK, Answer: WorkspaceList{}, handler: (*API).workspaceList},
	{Method: "GET", Path: "/api/workspaces/{ws}", ID: "getWorkspace", Tag: "workspaces", Summary: "A workspace and its members",
		Status: http.StatusOK, Answer: workspaceJSON{}, handler: (*API).workspaceGet},
	{Method: "DELETE", Path: "/api/workspaces/{ws}", ID: "deleteWorkspace", Tag: "workspaces", Summary: "Delete a workspace (its owner)",
		Status: http.StatusNoContent, handler: (*API).workspaceDelete},
	{Method: "POST", Path: "/api/workspaces/{ws}/members", ID: "addMember", Tag: "workspaces", Summary: "Add a member (or change the role of one already there)",
		Body: MemberRequest{}, Status: http.StatusCreated, Answer: memberJSON{}, handler: (*API).memberAdd},
	{Method: "PUT", Path: "/api/workspaces/{ws}/members/{person}", ID: "setMemberRole", Tag: "workspaces", Summary: "Change a member's role",
		Body: RoleRequest{}, Status: http.StatusOK, Answer: memberJSON{}, handler: (*API).memberRole},
	{Method: "DELETE", Path: "/api/workspaces/{ws}/members/{person}", ID: "removeMember", Tag: "workspaces", Summary: "Remove a member",
		Status: http.StatusNoContent, handler: (*API).memberRemove},
	{Method: "POST", Path: "/api/workspaces/{ws}/bindings", ID: "bindWorkspace", Tag: "workspaces", Summary: "Bind a platform workspace (a Slack team, a Discord guild) to the workspace",
		Body: BindRequest{}, Status: http.StatusCreated, Answer: BindingJSON{}, handler: (*API).workspaceBind},
	{Method: "GET", Path: "/api/workspaces/{ws}/agents", ID: "listWorkspaceAgents", Tag: "workspaces", Summary: "The agents that answer in a workspace",
		Status: http.StatusOK, Answer: AgentListings{}, handler: (*API).workspaceAgents},
	{Method: "GET", Path: "/api/workspaces/{ws}/retention", ID: "getRetention", Tag: "workspaces", Summary: "How long a workspace keeps its conversations",
		Status: http.StatusOK, Answer: retentionResponse{}, handler: (*API).retentionGet},
	{Method: "PUT", Path: "/api/workspaces/{ws}/retention", ID: "setRetention", Tag: "workspaces", Summary: "Set how long a workspace keeps its conversations (its owner; the export directory: the operator)",
		Body: retentionRequest{}, Status: http.StatusOK, Answer: retentionResponse{}, handler: (*API).retentionPut},
	{Method: "PUT", Path: "/api/agents/{agent}/pins", ID: "pinAgent", Tag: "workspaces", Summary: "Pin an agent to workspaces (its owner or the operator)",
		Body: PinRequest{}, Status: http.StatusOK, Answer: SharingJSON{}, handler: (*API).agentPin},
	{Method: "POST", Path: "/api/agents/{agent}/publish", ID: "publishAgent", Tag: "workspaces", Summary: "List an agent in the public directory, or take it out",
		Body: PublishRequest{}, BodyOptional: true, Status: http.StatusOK, Answer: SharingJSON{}, handler: (*API).agentPublish},
	{Method: "GET", Path: "/api/directory", ID: "listDirectory", Tag: "workspaces", Summary: "The public directory of agents",
		Status: http.StatusOK, Answer: AgentListings{}, handler: (*API).directory},
	{Method: "POST", Path: "/api/people/{person}/forget", ID: "forgetPerson", Tag: "workspaces", Summary: "Delete a person's data", Auth: AuthOperator,
		Body: forgetRequest{}, BodyOptional: true, Status: http.StatusOK, Answer: forgetResponse{}, handler: (*API).personForget},

	// Credentials and sign-in.
	{Method: "GET", Path: "/api/session", ID: "getSession", Tag: "auth", Summary: "Who the caller is, the agents it may talk to, a person's workspaces and a console session's CSRF token",
		Status: http.StatusOK, Answer: SessionJSON{}, handler: (*API).sessionInfo},
	{Method: "GET", Path: "/api/auth/whoami", ID: "whoami", Tag: "auth", Summary: "Who the credential is",
		Status: http.StatusOK, Answer: WhoamiJSON{}, handler: (*API).whoami},
	{Method: "POST", Path: "/api/auth/token", ID: "exchangeKey", Tag: "auth", Summary: "Exchange an agent key or host token for an agent's session", Auth: AuthExchange,
		Body: ExchangeRequest{}, BodyOptional: true, Status: http.StatusCreated, Answer: SessionTokenJSON{}, handler: (*API).exchange},
	// Bridges: agents whose model calls run on machines of their own.
	{Method: "GET", Path: "/api/bridge/announce", ID: "bridgeAnnounce", Tag: "bridges", Summary: "A bridge's connection (an agent's session): Server-Sent Events announcing the agent's model calls, closed when the token is revoked",
		Query: []Param{
			{Name: "bridge", Required: true, Doc: "the bridge's id"},
			{Name: "version", Doc: "the bridge's switchboard version"},
		},
		Status: http.StatusOK, Text: mediaSSE, Enabled: withBridges, handler: (*API).bridgeAnnounce},
	{Method: "POST", Path: "/api/bridge/claim", ID: "bridgeClaim", Tag: "bridges", Summary: "Claim the session's agent's model calls, with the work queue's claim",
		Body: BridgeClaimRequest{}, Status: http.StatusOK, Answer: BridgeClaimJSON{}, Enabled: withBridges, handler: (*API).bridgeClaim},
	{Method: "POST", Path: "/api/bridge/calls/{call}/heartbeat", ID: "bridgeHeartbeat", Tag: "bridges", Summary: "Extend the bridge's lease on a claimed call (409: another bridge took it over; 410: no turn waits for it)",
		Body: BridgeBeatRequest{}, Status: http.StatusNoContent, Enabled: withBridges, handler: (*API).bridgeHeartbeat},
	{Method: "POST", Path: "/api/bridge/calls/{call}/events", ID: "bridgeEvents", Tag: "bridges", Summary: "Stream a claimed call's events to the waiting turn",
		Body: BridgeEventsRequest{}, Status: http.StatusNoContent, Enabled: withBridges, handler: (*API).bridgeEvents},
	{Method: "POST", Path: "/api/bridge/calls/{call}/result", ID: "bridgeResult", Tag: "bridges", Summary: "End a claimed call with its response or its failure",
		Body: BridgeResultRequest{}, Status: http.StatusNoContent, Enabled: withBridges, handler: (*API).bridgeResult},
	{Method: "GET", Path: "/api/bridges", ID: "listBridges", Tag: "bridges", Summary: "The connected bridges: their agents, versions and last heartbeat", Auth: AuthOperator,
		Status: http.StatusOK, Answer: BridgeList{}, Enabled: withBridges, handler: (*API).bridgeList},
	{Method: "POST", Path: "/api/keys", ID: "createKey", Tag: "auth", Summary: "Issue an agent key or a host token", Auth: AuthOperator,
		Body: KeyRequest{}, Status: http.StatusCreated, Answer: IssuedKeyJSON{}, handler: (*API).keyCreate},
	{Method: "GET", Path: "/api/keys", ID: "listKeys", Tag: "auth", Summary: "Keys and tokens, never their secrets", Auth: AuthOperator,
		Query: []Param{
			{Name: "kind", Enum: []string{"agent", "host", "personal", "session"}},
			{Name: "revoked", Enum: []string{"0", "1"}, Doc: "1 lists revoked ones too"},
		},
		Status: http.StatusOK, Answer: KeyList{}, handler: (*API).keyList},
	{Method: "POST", Path: "/api/keys/{key}/revoke", ID: "revokeKey", Tag: "auth", Summary: "Revoke a key and its sessions (the operator any, a person their own)",
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: KeyJSON{}, handler: (*API).keyRevoke},
	{Method: "POST", Path: "/api/tokens", ID: "createToken", Tag: "auth", Summary: "Issue a personal access token",
		Body: TokenRequest{}, Status: http.StatusCreated, Answer: IssuedKeyJSON{}, handler: (*API).tokenCreate},
	{Method: "GET", Path: "/api/sessions", ID: "listSessions", Tag: "auth", Summary: "Console sessions and personal tokens with their last use: the caller's, a workspace's people's (its owner and admins), anyone's (the operator)",
		Query: []Param{
			{Name: "person", Doc: "one person's (a person id)"},
			{Name: "workspace", Doc: "the people of a workspace (its id, or a Slack team or Discord guild bound to it)"},
		},
		Status: http.StatusOK, Answer: SessionList{}, Enabled: withSessions, handler: (*API).sessionList},
	{Method: "POST", Path: "/api/sessions/{session}/end", ID: "endSession", Tag: "auth", Summary: "End a console session (its id) or revoke a personal token (sbp_…); refused on every instance from the next request",
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: SessionItemJSON{}, Enabled: withSessions, handler: (*API).sessionEnd},
	{Method: "GET", Path: "/auth/methods", ID: "signInMethods", Tag: "auth", Summary: "How the console may sign in: single sign-on (GET /auth/oidc/login starts it, the provider's callback is /auth/oidc/callback) and whether it is required", Auth: AuthNone,
		Status: http.StatusOK, Answer: SignInMethodsJSON{}, Enabled: withSignIn, handler: (*API).signInMethods},
	{Method: "POST", Path: "/auth/link", ID: "signInWithLink", Tag: "auth", Summary: "Spend a one-time sign-in link; sets the session cookie", Auth: AuthSignIn,
		Body: SignInRequest{}, Status: http.StatusOK, Answer: SignedInJSON{}, Enabled: withSignIn, handler: (*API).signInLink},
	{Method: "POST", Path: "/auth/token", ID: "signInWithToken", Tag: "auth", Summary: "Sign in with the operator token; sets the session cookie", Auth: AuthSignIn,
		Body: SignInRequest{}, Status: http.StatusOK, Answer: SignedInJSON{}, Enabled: withSignIn, handler: (*API).signInToken},
	{Method: "POST", Path: "/auth/logout", ID: "signOut", Tag: "auth", Summary: "End the console session", Auth: AuthSignIn,
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: SignedInJSON{}, Enabled: withSignIn, handler: (*API).signOut},

	// The operator's.
	{Method: "GET", Path: "/api/audit", ID: "listAudit", Tag: "operator", Summary: "The audit of guarded tool calls, newest first (the operator; a workspace's owners and admins its rows)",
		Query: []Param{
			{Name: "workspace", Doc: "a workspace id, or a platform workspace"},
			{Name: "agent"}, {Name: "conversation"}, {Name: "tool"}, {Name: "decision"},
			{Name: "outcome", Enum: []string{"pending", "ok", "failed", "denied", "expired", "cancelled"}},
			{Name: "from", Doc: "RFC 3339, inclusive"}, {Name: "to", Doc: "RFC 3339, exclusive"},
			{Name: "cursor", Doc: "the next_cursor of the page before"},
			limitParam(MaxAuditPage, DefaultAuditPage),
		},
		Status: http.StatusOK, Answer: AuditPage{}, handler: (*API).audit},
	{Method: "GET", Path: "/api/audit/export", ID: "exportAudit", Tag: "operator", Summary: "A time range of the audit, oldest first, as JSON lines: one audit event a line, the shape the audit sinks receive (the operator; a workspace's owners and admins its rows)",
		Query: []Param{
			{Name: "since", Doc: "rows created at or after: RFC 3339, a UTC day (2026-12-01) or a duration before now (24h); default the first"},
			{Name: "until", Doc: "rows created before, in the same forms; default now"},
			{Name: "workspace", Doc: "a workspace id: only its rows (required of a workspace's owners and admins)"},
		},
		Status: http.StatusOK, Text: mediaJSONLines, Lines: audit.Event{}, handler: (*API).auditExport},
	{Method: "GET", Path: "/api/usage", ID: "getUsage", Tag: "operator", Summary: "What model calls cost, per agent, conversation and day", Auth: AuthOperator,
		Query: []Param{
			{Name: "since", Doc: "RFC 3339"},
			{Name: "days", Type: "integer", Doc: "the last N days, today included (UTC)"},
			{Name: "limit", Type: "integer", Doc: "rows of each grouping"},
		},
		Status: http.StatusOK, Answer: UsageReport{}, handler: (*API).usage},
	{Method: "GET", Path: "/api/budgets", ID: "listBudgets", Tag: "operator", Summary: "Each spending budget's spend today and this month against its limits", Auth: AuthOperator,
		Status: http.StatusOK, Answer: BudgetList{}, handler: (*API).budgets},
	{Method: "GET", Path: "/api/slack/installs", ID: "listSlackInstalls", Tag: "operator", Summary: "The Slack workspaces and organisations the app is installed in: who installed it, scopes, token expiry and renewal, last event", Auth: AuthOperator,
		Query: []Param{
			{Name: "after", Doc: "the next of the page before: the key to list after"},
			limitParam(100, 100),
		},
		Status: http.StatusOK, Answer: SlackInstallList{}, handler: (*API).slackInstalls},
	{Method: "POST", Path: "/api/budgets/extend", ID: "extendBudget", Tag: "operator", Summary: "Grant a one-off extension of a budget's current day or month (audited)", Auth: AuthOperator,
		Body: BudgetExtendRequest{}, Status: http.StatusOK, Answer: BudgetStatus{}, handler: (*API).budgetExtend},
	{Method: "GET", Path: "/api/pairing", ID: "listPairings", Tag: "operator", Summary: "Pairing codes waiting for approval",
		Status: http.StatusOK, Answer: PairingList{}, Enabled: withPairings, handler: (*API).pairingList},
	{Method: "POST", Path: "/api/pairing/{code}/approve", ID: "approvePairing", Tag: "operator", Summary: "Approve a pairing code",
		Body: Empty{}, BodyOptional: true, Status: http.StatusOK, Answer: pairingJSON{}, Enabled: withPairings, handler: (*API).pairingApprove},
	{Method: "GET", Path: "/api/agents/{name}/personality", ID: "getPersonality", Tag: "operator", Summary: "An agent's personality document", Auth: AuthOperator,
		Query:  []Param{{Name: "version", Type: "integer", Doc: "an earlier version"}},
		Status: http.StatusOK, Answer: PersonalityJSON{}, Enabled: withPersonalities, handler: (*API).getPersonality},
	{Method: "PUT", Path: "/api/agents/{name}/personality", ID: "putPersonality", Tag: "operator", Summary: "Replace an agent's personality document", Auth: AuthOperator,
		Body: TextRequest{}, Status: http.StatusOK, Answer: PersonalityJSON{}, Enabled: withPersonalities, handler: (*API).putPersonality},
	{Method: "GET", Path: "/api/agents/{name}/personality/versions", ID: "listPersonalityVersions", Tag: "operator", Summary: "Every version of an agent's personality document, newest first", Auth: AuthOperator,
		Query:  []Param{{Name: "limit", Type: "integer"}},
		Status: http.StatusOK, Answer: PersonalityList{}, Enabled: withPersonalities, handler: (*API).personalityVersions},
	{Method: "POST", Path: "/api/skills", ID: "importSkills", Tag: "operator", Summary: "Import skills from a .zip or .tar.gz", Auth: AuthOperator,
		BodyMedia: []string{"application/zip", "application/gzip"}, Query: []Param{agentParam},
		Status: http.StatusCreated, Answer: SkillList{}, Enabled: withSkills, handler: (*API).importSkills},
	{Method: "GET", Path: "/api/skills", ID: "listSkills", Tag: "operator", Summary: "The skills", Auth: AuthOperator,
		Status: http.StatusOK, Answer: SkillList{}, Enabled: withSkills, handler: (*API).listSkills},
	{Method: "DELETE", Path: "/api/skills/{name}", ID: "removeSkill", Tag: "operator", Summary: "Remove a skill", Auth: AuthOperator,
		Query: []Param{agentParam}, Status: http.StatusNoContent, Enabled: withSkills, handler: (*API).removeSkill},
	{Method: "GET", Path: "/api/connections", ID: "listConnections", Tag: "operator", Summary: "The GitHub and Google connections the caller may see, without tokens",
		Status: http.StatusOK, Answer: ConnectionList{}, Enabled: withConnections, handler: (*API).listConnections},
	{Method: "DELETE", Path: "/api/connections/{id}", ID: "disconnect", Tag: "operator", Summary: "Revoke a connection at its provider and forget it",
		Status: http.StatusOK, Answer: DisconnectedJSON{}, Enabled: withConnections, handler: (*API).disconnect},
	{Method: "POST", Path: "/api/compare", ID: "compareModels", Tag: "operator", Summary: "One prompt on several models, side by side", Auth: AuthOperator,
		Body: CompareRequest{}, Status: http.StatusOK, Answer: CompareResponse{}, Enabled: withCompare, handler: (*API).compare},
	{Method: "GET", Path: "/api/mcp/status", ID: "getMCPStatus", Tag: "operator", Summary: "The MCP servers the service connects to: state, tools, last error", Auth: AuthOperator,
		Status: http.StatusOK, Answer: MCPStatusResponse{}, Enabled: withMCPStatus, handler: (*API).mcpStatus},
	{Method: "GET", Path: "/api/config/status", ID: "getConfigStatus", Tag: "operator", Summary: "The configuration in use: when it was loaded, reloads, the last refused reload", Auth: AuthOperator,
		Status: http.StatusOK, Answer: config.ReloadStatus{}, Enabled: withConfigStatus, handler: (*API).configStatus},

	// This document.
	{Method: "GET", Path: "/api/openapi.json", ID: "getOpenAPI", Tag: "meta", Summary: "This API's OpenAPI 3.1 document", Auth: AuthNone,
		Status: http.StatusOK, Answer: json.RawMessage{}, handler: (*API).openAPI},
}

// Empty is the body of a POST that takes none: {} (or nothing, with the
// JSON Content-Type).
type Empty struct{}

// TextRequest is a body of one text: a rulebook, a personality document.
type TextRequest struct {
	Text string `json:"text"`
}

// openapiJSON is the OpenAPI document of the API, generated from the route
// table (go test ./bots/web -run TestOpenAPI -update).
//
//go:embed openapi.json
var openapiJSON []byte

// openAPI serves the document: it describes the API, and holds nothing a
// caller could not learn by calling it, so it needs no credential.
func (a *API) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(openapiJSON)
	return ignoreWriteErr(err)
}
