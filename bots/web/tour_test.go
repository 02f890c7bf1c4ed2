package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/artifact"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/compare"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
)

// The tour: one server with every option the API takes, driven through
// (nearly) every route as a client would, each exchange recorded. The
// OpenAPI test checks every recorded exchange against the document, and the
// golden test keeps the main answers as they are on the wire.

// tourScript pauses on a risky tool ("launch") and on a frontend tool
// ("ask me"), makes an artifact ("write it") and echoes anything else.
const tourScript = `
turns:
  - after_tool: launch
    text: "Launched."
  - when_last_user_contains: launch
    tool_calls:
      - {name: launch, input: {}}
  - after_tool: ask_user
    text: "You chose {{last_user}}"
  - when_last_user_contains: "ask me"
    tool_calls:
      - {name: ask_user, input: {question: "Which colour?", choices: [Blue, Green]}}
  - after_tool: artifact_create
    text: "Made it."
  - when_last_user_contains: "write it"
    once: true
    tool_calls:
      - {name: artifact_create, input: {kind: code, title: main.go, language: go, content: "package main\n"}}
fallback:
  text: "echo: {{last_user}}"
`

// exchange is one request of the tour and its answer.
type exchange struct {
	Name   string // what the step is, for goldens and messages
	Method string
	Path   string
	Header http.Header // the request's
	Body   []byte      // the request's
	Status int
	Answer http.Header
	Result []byte
}

// tour drives the API.
type tour struct {
	srv       *server
	clk       *clock
	exchanges []*exchange
}

// do sends a request as the holder of token ("" for none) and records it.
// A stream's answer is read only up to its headers.
func (tr *tour) do(t *testing.T, name, method, path, token, contentType string, body []byte) *exchange {
	t.Helper()
	// Every step a second later: lists ordered by time are in the tour's
	// order, not in the order of random ids.
	tr.clk.advance(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, tr.srv.http.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := tr.srv.http.Client().Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", name, method, path, err)
	}
	defer resp.Body.Close()
	var raw []byte
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if raw, err = io.ReadAll(resp.Body); err != nil {
			t.Fatalf("%s: reading the answer: %v", name, err)
		}
	}
	ex := &exchange{Name: name, Method: method, Path: path, Header: req.Header, Body: body, Status: resp.StatusCode, Answer: resp.Header, Result: raw}
	tr.exchanges = append(tr.exchanges, ex)
	return ex
}

// call sends a JSON body (none when body is "") as token, checks the status
// and decodes the answer into out when out is not nil.
func (tr *tour) call(t *testing.T, name, method, path, token, body string, want int, out any) *exchange {
	t.Helper()
	ct := ""
	if method != http.MethodGet {
		ct = "application/json"
	}
	ex := tr.do(t, name, method, path, token, ct, []byte(body))
	if ex.Status != want {
		t.Fatalf("%s: %s %s %s = %d %s; want %d", name, method, path, body, ex.Status, ex.Result, want)
	}
	if out != nil {
		if err := json.Unmarshal(ex.Result, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, ex.Result, err)
		}
	}
	return ex
}

type tourPairings struct{ at time.Time }

func (p tourPairings) pairing(status store.PairingStatus) *store.Pairing {
	return &store.Pairing{Platform: "slack", UserID: "U9", UserName: "stranger", Workspace: "T1", Code: "ABCD-EFGH", Status: status, CreatedAt: p.at, ExpiresAt: p.at.Add(time.Hour)}
}

func (p tourPairings) Pending(context.Context) ([]*store.Pairing, error) {
	return []*store.Pairing{p.pairing(store.PairingPending)}, nil
}

func (p tourPairings) Approve(_ context.Context, code, by string) (*store.Pairing, error) {
	out := p.pairing(store.PairingApproved)
	out.ApprovedAt, out.ApprovedBy = &p.at, by
	return out, nil
}

type tourConnections struct{ at time.Time }

func (c tourConnections) conn(id uuid.UUID) *store.Connection {
	return &store.Connection{ID: id, Provider: "github", Owner: store.PersonOwner(uuid.MustParse("7d1e3c1a-0000-4000-8000-000000000001")), Account: "octocat",
		AccountID: "1", Scopes: []string{"repo"}, ConnectedBy: uuid.MustParse("7d1e3c1a-0000-4000-8000-000000000001"), CreatedAt: c.at, UpdatedAt: c.at}
}

func (c tourConnections) List(context.Context, connection.Viewer) ([]*store.Connection, error) {
	return []*store.Connection{c.conn(uuid.MustParse("7d1e3c1a-0000-4000-8000-000000000002"))}, nil
}

func (c tourConnections) Disconnect(_ context.Context, _ connection.Viewer, id uuid.UUID) (*store.Connection, error) {
	return c.conn(id), nil
}

type tourSkills struct{ at time.Time }

func (s tourSkills) skill() *store.Skill {
	return &store.Skill{Layer: "operator", Name: "release", Description: "How we release", Files: map[string][]byte{"SKILL.md": nil, "notes.md": nil}, CreatedAt: s.at, UpdatedAt: s.at}
}

func (s tourSkills) ImportArchive(context.Context, string, []byte, string) ([]*store.Skill, error) {
	return []*store.Skill{s.skill()}, nil
}

func (s tourSkills) List(context.Context) ([]*store.Skill, error) {
	return []*store.Skill{s.skill()}, nil
}

func (s tourSkills) Remove(context.Context, string, string) error { return nil }

// skillZip is a skill archive (the fake library does not read it).
func skillZip(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	f, err := zw.Create("release/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("---\nname: release\ndescription: How we release\n---\nShip it.\n")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// converse opens a conversation as the operator, says text in it and
// waits for the turn to leave it in want.
func (tr *tour) converse(t *testing.T, st store.Store, text string, want store.ConversationStatus) web.ConversationJSON {
	t.Helper()
	var conv web.ConversationJSON
	step := strings.ReplaceAll(text, " ", "_")
	tr.call(t, step+"_opened", "POST", "/api/conversations", "op", "", 201, &conv)
	tr.call(t, step+"_said", "POST", "/api/conversations/"+conv.ID.String()+"/messages", "op", fmt.Sprintf(`{"text":%q}`, text), 202, nil)
	waitStatus(t, st, conv.ID, want)
	return conv
}

// operatorOnly calls every operation the document says only the operator
// may call as the holder of token, a person, and checks that each refuses
// them with 403. Path parameters are ids that name nothing: the right is
// checked first.
func (tr *tour) operatorOnly(t *testing.T, token string) {
	t.Helper()
	doc := loadDocument(t)
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-switchboard-auth"] != web.AuthOperator.String() {
				continue
			}
			ct, body := "application/json", []byte("{}")
			if op.RequestBody != nil && op.RequestBody.Value.Content.Get("application/json") == nil {
				ct, body = "application/zip", skillZip(t)
			}
			p := pathParamRE.ReplaceAllString(path, "7d1e3c1a-0000-4000-8000-0000000000ff")
			if ex := tr.do(t, "operator_only", method, p, token, ct, body); ex.Status != http.StatusForbidden {
				t.Errorf("%s %s as a person = %d %s; the document says only the operator may call it: want 403", method, p, ex.Status, ex.Result)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("the document has no operation for the operator only")
	}
}

var pathParamRE = regexp.MustCompile(`\{[^}]+\}`)

// only is the one element of list, failing the test when there is not
// exactly one.
func only[T any](t *testing.T, what string, list []T) T {
	t.Helper()
	if len(list) != 1 {
		t.Fatalf("%d of %s; want one", len(list), what)
	}
	return list[0]
}

// runTour starts a server with every option and drives it through the
// routes; it returns the exchanges in order.
func runTour(t *testing.T) []*exchange {
	t.Helper()
	st := testenv.SQLite(t)
	ctx := context.Background()
	clk := newClock()
	keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	signin, err := web.NewSignIn(web.SignInOptions{Store: st, PublicURL: "https://console.example.com", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	sl := &schedulesLater{}
	bridges, err := core.NewBridges(core.BridgesOptions{Store: st, Settings: func() config.Bridge { return config.Bridge{} }, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	opts := web.Options{
		Bridges: bridges,
		Token:   "op", Keys: keys, SignIn: signin, Schedules: sl, Now: clk.Now,
		Pairings: tourPairings{clk.Now()}, Connections: tourConnections{clk.Now()}, Skills: tourSkills{clk.Now()},
		Compare: func(_ context.Context, req *web.CompareRequest) ([]compare.Result, error) {
			out := make([]compare.Result, 0, len(req.Models))
			for _, m := range req.Models {
				out = append(out, compare.Result{Model: m, Answer: "four", LatencyMS: 12, InputTokens: 10, OutputTokens: 1, Priced: true, CostMicroUSD: 3})
			}
			return out, nil
		},
		AgentsFunc: func() []string { return []string{"atlas"} },
		MCPStatus: func() []mcpclient.Status {
			return []mcpclient.Status{
				{Name: "github", Transport: mcpclient.TransportHTTP, State: mcpclient.StateConnected, Tools: []string{"github__search"}, Since: clk.Now(),
					Connects: 1, Server: "github-mcp 1.2.0", ProtocolVersion: "2025-11-25"},
				{Name: "files", Transport: mcpclient.TransportStdio, State: mcpclient.StateDisconnected, Tools: []string{}, Since: clk.Now(),
					Error: "the server exited: exit status 1", Connects: 2},
			}
		},
		ConfigStatus: func() config.ReloadStatus {
			at := clk.Now()
			return config.ReloadStatus{LoadedAt: at, Reloads: 2, LastError: "switchboard.yaml: agents[0].model: unknown provider \"acme\"",
				ErrorAt: &at, Files: []string{"/etc/switchboard/switchboard.yaml", "/etc/switchboard/mcp-servers.json"}}
		},
	}
	script := writeScript(t, tourScript)
	// scout is there for atlas to hand a run's steps to.
	team := []config.Agent{testAgent("atlas", script, true), testAgent("scout", script, false)}
	srv := startTeam(t, st, clk, team, false, opts, func(r *tool.Registry) {
		tool.MustRegister(r, tool.Def{Name: "launch", Description: "risky", Risk: tool.RiskHigh},
			func(context.Context, *tool.Request, struct{}) (map[string]string, error) {
				return map[string]string{"launched": "yes"}, nil
			})
		arts, err := artifact.New(artifact.Options{Store: st, PublicURL: "https://sb.example.com", Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if err := artifact.RegisterTools(r, arts); err != nil {
			t.Fatal(err)
		}
	}, func(svc *core.Service, o *web.Options) {
		o.Rulebooks, o.Runs, o.Actor, o.Personalities, o.Sessions = svc, svc, svc, svc.Personalities(), svc
	})
	sched, err := scheduler.New(scheduler.Options{Store: st, Service: srv.svc, Clock: clockwork.NewFakeClockAt(clk.Now()), Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	sl.Scheduler = sched
	tr := &tour{srv: srv, clk: clk}
	const op = "op"
	convPath := func(id uuid.UUID, rest string) string { return "/api/conversations/" + id.String() + rest }

	// The document, without a credential.
	tr.call(t, "openapi", "GET", "/api/openapi.json", "", "", 200, nil)

	// Who is calling.
	tr.call(t, "session", "GET", "/api/session", op, "", 200, nil)
	tr.call(t, "whoami", "GET", "/api/auth/whoami", op, "", 200, nil)

	// A conversation, a message and its reply, the log.
	conv := tr.converse(t, st, "hello", store.ConversationIdle)
	tr.call(t, "conversation", "GET", convPath(conv.ID, ""), op, "", 200, nil)
	tr.call(t, "conversation_at", "GET", convPath(conv.ID, "?at=1"), op, "", 200, nil)
	tr.call(t, "entries", "GET", convPath(conv.ID, "/entries"), op, "", 200, nil)
	tr.call(t, "entries_at", "GET", convPath(conv.ID, "/entries?at=1"), op, "", 200, nil)
	tr.call(t, "stream", "GET", convPath(conv.ID, "/stream?tail=1"), op, "", 200, nil)
	tr.call(t, "not_a_conversation", "GET", "/api/conversations/nope", op, "", 400, nil)
	tr.call(t, "no_token", "GET", convPath(conv.ID, ""), "", "", 401, nil)

	// A fork, its tree, the history.
	var fork struct {
		ConversationID uuid.UUID `json:"conversation_id"`
	}
	tr.call(t, "forked", "POST", convPath(conv.ID, "/fork"), op, `{"seq":1,"content":"hello again"}`, 201, &fork)
	waitStatus(t, st, fork.ConversationID, store.ConversationIdle)
	tr.call(t, "fork_tree", "GET", convPath(fork.ConversationID, "/forks"), op, "", 200, nil)
	tr.call(t, "renamed", "PATCH", convPath(conv.ID, ""), op, `{"title":"Greetings"}`, 200, nil)
	tr.call(t, "history", "GET", "/api/conversations", op, "", 200, nil)
	tr.call(t, "history_page", "GET", "/api/conversations?limit=1", op, "", 200, nil)
	ex := tr.call(t, "exported", "GET", convPath(conv.ID, "/export"), op, "", 200, nil)
	tr.call(t, "exported_md", "GET", convPath(conv.ID, "/export?format=md"), op, "", 200, nil)
	tr.call(t, "imported", "POST", "/api/conversations/import", op, string(ex.Result), 201, nil)
	tr.call(t, "bulk_archived", "POST", "/api/conversations/bulk", op, fmt.Sprintf(`{"ids":[%q],"action":"archive"}`, fork.ConversationID), 200, nil)
	tr.call(t, "bulk_exported", "POST", "/api/conversations/bulk", op, fmt.Sprintf(`{"ids":[%q],"action":"export"}`, conv.ID), 200, nil)
	tr.call(t, "bulk_exported_md", "POST", "/api/conversations/bulk", op, fmt.Sprintf(`{"ids":[%q],"action":"export","format":"md"}`, conv.ID), 200, nil)

	// Folders.
	var folder struct {
		ID uuid.UUID `json:"id"`
	}
	tr.call(t, "folder_created", "POST", "/api/folders", op, `{"name":"Launch","color":"#336699"}`, 201, &folder)
	tr.call(t, "folders", "GET", "/api/folders", op, "", 200, nil)
	tr.call(t, "folder_renamed", "PATCH", "/api/folders/"+folder.ID.String(), op, `{"name":"Launches"}`, 200, nil)
	tr.call(t, "filed", "PATCH", convPath(conv.ID, ""), op, fmt.Sprintf(`{"folder":%q}`, folder.ID), 200, nil)
	tr.call(t, "folder_deleted", "DELETE", "/api/folders/"+folder.ID.String(), op, "", 204, nil)

	// The rulebook, side threads and a delegation.
	tr.call(t, "rules_set", "PUT", convPath(conv.ID, "/rules"), op, `{"text":"Be brief."}`, 200, nil)
	tr.call(t, "rules", "GET", convPath(conv.ID, "/rules"), op, "", 200, nil)
	if _, err := st.SideThreadCreate(ctx, &store.SideThreadCreateParams{ParentID: conv.ID, ParentSeq: 1, ChildID: fork.ConversationID, Opener: "atlas", Peer: "scout", Now: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	d, err := st.DelegationCreate(ctx, &store.DelegationCreateParams{FromConversation: conv.ID, FromAgent: "atlas", ToAgent: "writer", ChildID: fork.ConversationID, Task: "draft the post", Now: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	tr.call(t, "side_threads", "GET", convPath(conv.ID, "/side-threads"), op, "", 200, nil)
	tr.call(t, "delegation", "GET", "/api/delegations/"+d.ID.String(), op, "", 200, nil)

	// A confirmation: listed, read, decided by its call; another decided
	// by its id with "always", which makes a standing grant.
	paused := tr.converse(t, st, "launch it", store.ConversationPaused)
	tr.call(t, "conversation_paused", "GET", convPath(paused.ID, ""), op, "", 200, nil)
	var inbox web.ApprovalList
	tr.call(t, "approvals", "GET", "/api/approvals", op, "", 200, &inbox)
	launch := only(t, "the launch's approval", inbox.Approvals)
	tr.call(t, "approval", "GET", "/api/approvals/"+launch.ID, op, "", 200, nil)
	tr.call(t, "decided", "POST", convPath(paused.ID, "/decide"), op, fmt.Sprintf(`{"call_id":%q,"value":"approve"}`, launch.CallID), 200, nil)
	waitStatus(t, st, paused.ID, store.ConversationIdle)
	tr.call(t, "launch_again", "POST", convPath(paused.ID, "/messages"), op, `{"text":"launch again"}`, 202, nil)
	waitStatus(t, st, paused.ID, store.ConversationPaused)
	tr.call(t, "approvals_again", "GET", "/api/approvals", op, "", 200, &inbox)
	tr.call(t, "decided_by_id", "POST", "/api/approvals/"+only(t, "the second launch's approval", inbox.Approvals).ID, op, `{"choice":"always"}`, 200, nil)
	waitStatus(t, st, paused.ID, store.ConversationIdle)
	var grants web.GrantList
	tr.call(t, "grants", "GET", "/api/grants", op, "", 200, &grants)
	grant := only(t, "the grant \"always\" made", grants.Grants)
	tr.call(t, "grant_revoked", "DELETE", "/api/grants/"+grant.ID.String(), op, "", 200, nil)

	// A frontend tool's result.
	asked := tr.converse(t, st, "ask me", store.ConversationPaused)
	var pending web.ConversationDetail
	tr.call(t, "conversation_asking", "GET", convPath(asked.ID, ""), op, "", 200, &pending)
	question := only(t, "the question's call", pending.PendingCalls)
	tr.call(t, "tool_results", "POST", convPath(asked.ID, "/tool-results"), op, fmt.Sprintf(`{"results":[{"call_id":%q,"output":{"choice":"Blue"}}]}`, question.CallID), 202, nil)
	waitStatus(t, st, asked.ID, store.ConversationIdle)

	// An artifact.
	tr.call(t, "write_it", "POST", convPath(asked.ID, "/messages"), op, `{"text":"write it"}`, 202, nil)
	waitStatus(t, st, asked.ID, store.ConversationIdle)
	var arts web.ArtifactList
	tr.call(t, "artifacts", "GET", "/api/artifacts", op, "", 200, &arts)
	art := "/api/artifacts/" + only(t, "the artifact main.go", arts.Artifacts).ID.String()
	tr.call(t, "artifact", "GET", art, op, "", 200, nil)
	tr.call(t, "artifact_version", "GET", art+"/versions/1", op, "", 200, nil)
	tr.call(t, "artifact_diff", "GET", art+"/diff", op, "", 200, nil)
	tr.call(t, "artifact_comment", "POST", art+"/comments", op, `{"text":"needs a test"}`, 201, nil)

	// A run.
	run, err := st.RunCreate(ctx, &store.RunCreateParams{ConversationID: conv.ID, LeadAgent: "atlas", Goal: "ship it", Now: clk.Now(),
		Steps: []store.RunStepSpec{{Key: "build", Title: "Build it", Agent: "atlas", Class: "default"}, {Key: "test", Title: "Test it", Agent: "atlas", Class: "default", DependsOn: []string{"build"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RunEventAppend(ctx, &store.RunEventAppendParams{RunID: run.ID, Kind: "created", Status: "running", Now: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	runPath := "/api/runs/" + run.ID.String()
	tr.call(t, "runs", "GET", "/api/runs", op, "", 200, nil)
	tr.call(t, "run", "GET", runPath, op, "", 200, nil)
	tr.call(t, "run_events", "GET", runPath+"/events", op, "", 200, nil)
	tr.call(t, "run_cancelled", "POST", runPath+"/cancel", op, "{}", 200, nil)
	tr.call(t, "run_retried", "POST", runPath+"/retry", op, "{}", 200, nil)
	tr.call(t, "graph", "GET", "/api/graph?c="+conv.ID.String(), op, "", 200, nil)
	tr.call(t, "run_started", "POST", "/api/runs", op, `{"lead":"atlas","title":"Release","plan":{"goal":"Ship it","steps":[`+
		`{"id":"build","title":"Build it","agent":"scout","inputs":{"branch":"main"}},{"id":"test","title":"Test it","role":"generalist","depends_on":["build"]}]}}`, 201, nil)
	tr.call(t, "run_refused", "POST", "/api/runs", op, `{"lead":"atlas","plan":{"steps":[{"id":"build","title":"Build it","agent":"ghost"}]}}`, 400, nil)

	// Schedules.
	routine, err := sched.CreateSchedule(ctx, scheduler.ScheduleParams{
		Kind: store.ScheduleRoutine, Agent: "atlas", Name: "digest", Owner: "U1", Target: scheduler.Target{Platform: "slack", Workspace: "T1", Channel: "C1"},
		Spec: "every 4h", Instruction: "summarise",
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := "/api/schedules/" + routine.ID.String()
	tr.call(t, "schedules", "GET", "/api/schedules", op, "", 200, nil)
	tr.call(t, "schedule_paused", "POST", sc+"/pause", op, "{}", 200, nil)
	tr.call(t, "schedule_resumed", "POST", sc+"/resume", op, "{}", 200, nil)
	tr.call(t, "schedule_run", "POST", sc+"/run", op, "{}", 202, nil)

	// Workspaces, their members, agents and retention.
	ana, bo := uuid.MustParse("7d1e3c1a-0000-4000-8000-00000000000a"), uuid.MustParse("7d1e3c1a-0000-4000-8000-00000000000b")
	var ws struct {
		ID string `json:"id"`
	}
	tr.call(t, "workspace_created", "POST", "/api/workspaces", op, fmt.Sprintf(`{"name":"Launch team","owner":%q}`, ana), 201, &ws)
	wsPath := "/api/workspaces/" + ws.ID
	tr.call(t, "workspaces", "GET", "/api/workspaces?person="+ana.String(), op, "", 200, nil)
	tr.call(t, "member_added", "POST", wsPath+"/members", op, fmt.Sprintf(`{"person":%q}`, bo), 201, nil)
	tr.call(t, "member_role", "PUT", wsPath+"/members/"+bo.String(), op, `{"role":"admin"}`, 200, nil)
	tr.call(t, "workspace", "GET", wsPath, op, "", 200, nil)
	tr.call(t, "member_removed", "DELETE", wsPath+"/members/"+bo.String(), op, "", 204, nil)
	tr.call(t, "bound", "POST", wsPath+"/bindings", op, `{"platform":"slack","external_id":"T77"}`, 201, nil)
	tr.call(t, "published", "POST", "/api/agents/atlas/publish", op, "{}", 200, nil)
	tr.call(t, "unpublished", "POST", "/api/agents/atlas/publish", op, `{"published":false}`, 200, nil)
	tr.call(t, "pinned", "PUT", "/api/agents/atlas/pins", op, fmt.Sprintf(`{"workspaces":[%q]}`, ws.ID), 200, nil)
	tr.call(t, "workspace_agents", "GET", wsPath+"/agents", op, "", 200, nil)
	tr.call(t, "directory", "GET", "/api/directory", op, "", 200, nil)
	tr.call(t, "retention_set", "PUT", wsPath+"/retention", op, `{"keep_days":30}`, 200, nil)
	tr.call(t, "retention", "GET", wsPath+"/retention", op, "", 200, nil)

	// Keys, sessions and tokens.
	var agentKey struct {
		Token string `json:"token"`
		ID    string `json:"id"`
	}
	tr.call(t, "key_created", "POST", "/api/keys", op, `{"agent":"atlas","label":"ci"}`, 201, &agentKey)
	var session struct {
		Token string `json:"token"`
	}
	tr.call(t, "session_token", "POST", "/api/auth/token", agentKey.Token, "{}", 201, &session)
	tr.call(t, "whoami_agent", "GET", "/api/auth/whoami", session.Token, "", 200, nil)
	var personal struct {
		Token string `json:"token"`
	}
	tr.call(t, "token_created", "POST", "/api/tokens", op, fmt.Sprintf(`{"person":%q,"workspaces":[%q],"label":"laptop","expires_in":"720h"}`, ana, ws.ID), 201, &personal)
	tr.call(t, "whoami_person", "GET", "/api/auth/whoami", personal.Token, "", 200, nil)
	tr.call(t, "session_person", "GET", "/api/session", personal.Token, "", 200, nil)
	tr.call(t, "sessions_person", "GET", "/api/sessions", personal.Token, "", 200, nil)
	tr.call(t, "keys", "GET", "/api/keys", op, "", 200, nil)
	tr.call(t, "key_revoked", "POST", "/api/keys/"+agentKey.ID+"/revoke", op, "{}", 200, nil)

	// The operator's reports and settings.
	tr.call(t, "audit", "GET", "/api/audit", op, "", 200, nil)
	tr.call(t, "usage", "GET", "/api/usage", op, "", 200, nil)
	tr.call(t, "pairings", "GET", "/api/pairing", op, "", 200, nil)
	tr.call(t, "pairing_approved", "POST", "/api/pairing/ABCD-EFGH/approve", op, "{}", 200, nil)
	tr.call(t, "personality_set", "PUT", "/api/agents/atlas/personality", op, `{"text":"Curious and brief."}`, 200, nil)
	tr.call(t, "personality", "GET", "/api/agents/atlas/personality", op, "", 200, nil)
	tr.call(t, "personality_versions", "GET", "/api/agents/atlas/personality/versions", op, "", 200, nil)
	tr.call(t, "connections", "GET", "/api/connections", op, "", 200, nil)
	tr.call(t, "disconnected", "DELETE", "/api/connections/7d1e3c1a-0000-4000-8000-000000000002", op, "", 200, nil)
	tr.call(t, "mcp_status", "GET", "/api/mcp/status", op, "", 200, nil)
	tr.call(t, "config_status", "GET", "/api/config/status", op, "", 200, nil)
	tr.call(t, "bridges", "GET", "/api/bridges", op, "", 200, nil)
	tr.call(t, "compared", "POST", "/api/compare", op, `{"models":["anthropic:claude-a","openai:gpt-b"],"prompt":"2+2?"}`, 200, nil)
	if ex := tr.do(t, "skills_imported", "POST", "/api/skills", op, "application/zip", skillZip(t)); ex.Status != 201 {
		t.Fatalf("importing skills = %d %s", ex.Status, ex.Result)
	}
	tr.call(t, "skills", "GET", "/api/skills", op, "", 200, nil)
	tr.call(t, "skill_removed", "DELETE", "/api/skills/release", op, "", 204, nil)

	// What the document says is the operator's refuses a person.
	tr.operatorOnly(t, personal.Token)

	// Signing in and out of the console.
	tr.call(t, "signed_in", "POST", "/auth/token", "", `{"token":"op"}`, 200, nil)
	tr.call(t, "sign_in_methods", "GET", "/auth/methods", "", "", 200, nil)
	var all struct {
		Sessions []struct{ ID, Kind string } `json:"sessions"`
	}
	tr.call(t, "sessions_all", "GET", "/api/sessions", op, "", 200, &all)
	for _, s := range all.Sessions {
		if s.Kind == "console" {
			tr.call(t, "session_ended", "POST", "/api/sessions/"+s.ID+"/end", op, "{}", 200, nil)
			break
		}
	}
	tr.call(t, "bad_link", "POST", "/auth/link", "", `{"token":"nope"}`, 401, nil)
	link, err := signin.Link(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	tr.call(t, "signed_in_by_link", "POST", "/auth/link", "", fmt.Sprintf(`{"token":%q}`, strings.SplitN(link, "t=", 2)[1]), 200, nil)
	tr.call(t, "signed_out", "POST", "/auth/logout", "", "", 200, nil)

	// Forgetting, deleting.
	tr.call(t, "forgotten", "POST", "/api/people/"+bo.String()+"/forget", op, "{}", 200, nil)
	tr.call(t, "conversation_deleted", "DELETE", convPath(fork.ConversationID, ""), op, "", 204, nil)
	tr.call(t, "workspace_deleted", "DELETE", wsPath, op, "", 204, nil)
	return tr.exchanges
}
