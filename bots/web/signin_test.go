package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// browser is a client holding a session cookie and its CSRF token, as the
// page does.
type browser struct {
	srv    *server
	cookie string
	csrf   string
}

func (b *browser) call(t *testing.T, method, path, body string, extra http.Header) (int, string) {
	t.Helper()
	hdr := http.Header{}
	if b.cookie != "" {
		hdr.Set("Cookie", web.SessionCookie+"="+b.cookie)
	}
	if b.csrf != "" && method != http.MethodGet {
		hdr.Set(web.CSRFHeader, b.csrf)
	}
	for k, v := range extra {
		hdr[k] = v
	}
	return b.srv.call(t, method, path, body, hdr, nil)
}

// signIn posts a token to an /auth endpoint and keeps the cookie it sets.
func signIn(t *testing.T, s *server, path, token string) (*browser, int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"token": token})
	req, _ := http.NewRequest(http.MethodPost, s.http.URL+path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&msg)
	b := &browser{srv: s}
	for _, c := range resp.Cookies() {
		if c.Name == web.SessionCookie {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || !c.Secure || c.Path != "/" {
				t.Errorf("session cookie %+v; want HttpOnly, SameSite=Strict, Secure (an https public URL), Path=/", c)
			}
			b.cookie = c.Value
		}
	}
	if resp.StatusCode == http.StatusOK {
		var sess struct {
			CSRF string `json:"csrf"`
		}
		code, raw := b.call(t, http.MethodGet, "/api/session", "", nil)
		if code != http.StatusOK || json.Unmarshal([]byte(raw), &sess) != nil || sess.CSRF == "" {
			t.Fatalf("GET /api/session after signing in = %d %s; want the session with its CSRF token", code, raw)
		}
		b.csrf = sess.CSRF
	}
	errMsg, _ := msg["error"].(string)
	return b, resp.StatusCode, errMsg
}

// TestSignIn: a login link signs its person in once, within ten minutes;
// the session cookie is a principal that sees only the person's
// workspaces, and an unsafe request with it needs the CSRF header and this
// site as its origin. The operator signs in with the token.
func TestSignIn(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clk := newClock()
		ctx := context.Background()
		signin, err := web.NewSignIn(web.SignInOptions{Store: st, PublicURL: "https://console.example.com/", Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "op", SignIn: signin})
		op := http.Header{"Authorization": {"Bearer op"}}

		ana := uuid.New()
		personal, err := st.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: ana})
		if err != nil {
			t.Fatal(err)
		}
		elsewhere, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Elsewhere", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		var other conversationOut
		if code, raw := s.call(t, http.MethodPost, "/api/conversations", fmt.Sprintf(`{"workspace": %q}`, elsewhere.ID), op, &other); code != http.StatusCreated {
			t.Fatalf("creating a conversation elsewhere = %d %s", code, raw)
		}

		link, err := signin.Link(ctx, ana)
		if err != nil {
			t.Fatal(err)
		}
		token, ok := strings.CutPrefix(link, "https://console.example.com/login?t=")
		if !ok || len(token) < 40 {
			t.Fatalf("link %q; want https://console.example.com/login?t=<secret>", link)
		}

		// Login CSRF: another site, or a form body, cannot sign a browser in.
		if code, raw := s.call(t, http.MethodPost, "/auth/link", `{"token": "`+token+`"}`, http.Header{"Origin": {"https://evil.example"}}, nil); code != http.StatusForbidden {
			t.Errorf("POST /auth/link from another site = %d %s; want 403", code, raw)
		}
		if code, raw := s.call(t, http.MethodPost, "/auth/link", "token="+token, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, nil); code != http.StatusUnsupportedMediaType {
			t.Errorf("POST /auth/link as a form = %d %s; want 415", code, raw)
		}

		b, code, _ := signIn(t, s, "/auth/link", token)
		if code != http.StatusOK {
			t.Fatalf("signing in with the link = %d; want 200", code)
		}
		if _, code, msg := signIn(t, s, "/auth/link", token); code != http.StatusUnauthorized || !strings.Contains(msg, "already used") {
			t.Errorf("second use of the link = %d %q; want 401 saying it was already used", code, msg)
		}
		late, err := signin.Link(ctx, ana)
		if err != nil {
			t.Fatal(err)
		}
		clk.advance(web.LinkTTL + time.Second)
		if _, code, msg := signIn(t, s, "/auth/link", strings.SplitN(late, "t=", 2)[1]); code != http.StatusUnauthorized || !strings.Contains(msg, "expired") {
			t.Errorf("a link used after %s = %d %q; want 401 saying it expired", web.LinkTTL, code, msg)
		}
		if _, code, _ := signIn(t, s, "/auth/link", "not-a-link"); code != http.StatusUnauthorized {
			t.Errorf("an unknown link = %d; want 401", code)
		}

		// The session is the person: their personal workspace, nothing else.
		if code, raw := b.call(t, http.MethodPost, "/api/conversations", "{}", http.Header{web.CSRFHeader: {"wrong"}}); code != http.StatusForbidden {
			t.Errorf("POST with a wrong CSRF token = %d %s; want 403", code, raw)
		}
		if code, raw := b.call(t, http.MethodPost, "/api/conversations", "{}", http.Header{"Origin": {"https://evil.example"}}); code != http.StatusForbidden {
			t.Errorf("POST from another site with the cookie and token = %d %s; want 403", code, raw)
		}
		code, raw := b.call(t, http.MethodPost, "/api/conversations", "{}", http.Header{"Origin": {s.http.URL}})
		if code != http.StatusCreated {
			t.Fatalf("POST /api/conversations with the session = %d %s; want 201", code, raw)
		}
		var mine conversationOut
		_ = json.Unmarshal([]byte(raw), &mine)
		if ws, err := st.ConversationWorkspace(ctx, mine.ID); err != nil || ws == nil || *ws != personal.ID {
			t.Errorf("the session's conversation is in workspace %v (%v); want the person's personal one %s", ws, err, personal.ID)
		}
		code, raw = b.call(t, http.MethodGet, "/api/conversations", "", nil)
		if code != http.StatusOK || !strings.Contains(raw, mine.ID.String()) || strings.Contains(raw, other.ID.String()) {
			t.Errorf("GET /api/conversations with the session = %d %s; want %s and not %s", code, raw, mine.ID, other.ID)
		}
		for _, p := range []string{"", "/entries", "/forks", "/stream"} {
			if code, raw := b.call(t, http.MethodGet, "/api/conversations/"+other.ID.String()+p, "", nil); code != http.StatusNotFound {
				t.Errorf("GET the other workspace's conversation%s with the session = %d %s; want 404", p, code, raw)
			}
		}

		// Signing out ends the session.
		if code, raw := b.call(t, http.MethodPost, "/auth/logout", "{}", nil); code != http.StatusOK {
			t.Fatalf("POST /auth/logout = %d %s", code, raw)
		}
		if code, _ := b.call(t, http.MethodGet, "/api/session", "", nil); code != http.StatusUnauthorized {
			t.Errorf("GET /api/session after signing out = %d; want 401", code)
		}

		// The operator's token opens an operator session.
		if _, code, _ := signIn(t, s, "/auth/token", "wrong"); code != http.StatusUnauthorized {
			t.Errorf("signing in with a wrong token = %d; want 401", code)
		}
		opb, code, _ := signIn(t, s, "/auth/token", "op")
		if code != http.StatusOK {
			t.Fatalf("signing in with the operator token = %d; want 200", code)
		}
		// A new session prunes what expired: the late link is gone.
		lateHash := sha256.Sum256([]byte(strings.SplitN(late, "t=", 2)[1]))
		if _, err := st.LoginFind(ctx, lateHash[:]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("finding the expired link after a new sign-in: %v; want it pruned (not found)", err)
		}
		code, raw = opb.call(t, http.MethodGet, "/api/conversations", "", nil)
		if code != http.StatusOK || !strings.Contains(raw, mine.ID.String()) || !strings.Contains(raw, other.ID.String()) {
			t.Errorf("GET /api/conversations as the operator's session = %d %s; want every conversation", code, raw)
		}
		// Sessions end when they expire.
		clk.advance(web.DefaultSessionTTL)
		if code, _ := opb.call(t, http.MethodGet, "/api/session", "", nil); code != http.StatusUnauthorized {
			t.Errorf("GET /api/session after %s = %d; want 401", web.DefaultSessionTTL, code)
		}
	})
}

// TestConversationListAndForks: the list pages by last activity with no
// row twice; the fork tree shows a conversation's parent, children and
// child counts.
func TestConversationListAndForks(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clk := newClock()
		s := start(t, st, clk, writeScript(t, echoScript), web.Options{})
		root := s.create(t)
		s.post(t, root, "first")
		waitStatus(t, st, root, store.ConversationIdle)
		var forks []uuid.UUID
		for _, text := range []string{"fork one", "fork two"} {
			var out struct {
				ID uuid.UUID `json:"conversation_id"`
			}
			s.mustCall(t, http.MethodPost, "/api/conversations/"+root.String()+"/fork", fmt.Sprintf(`{"seq": 1, "content": %q}`, text), http.StatusCreated, &out)
			forks = append(forks, out.ID)
			waitStatus(t, st, out.ID, store.ConversationIdle)
		}
		var tree struct {
			Conversation map[string]any   `json:"conversation"`
			Parent       map[string]any   `json:"parent"`
			Children     []map[string]any `json:"children"`
			Tree         []map[string]any `json:"tree"`
		}
		s.mustCall(t, http.MethodGet, "/api/conversations/"+forks[1].String()+"/forks", "", http.StatusOK, &tree)
		if tree.Parent["id"] != root.String() || tree.Parent["child_count"] != float64(2) || len(tree.Children) != 0 {
			t.Errorf("fork tree of a fork: parent %v, children %v; want the root with 2 children, and none", tree.Parent, tree.Children)
		}
		if len(tree.Tree) != 3 || tree.Tree[0]["id"] != root.String() || tree.Tree[1]["depth"] != float64(1) || tree.Tree[2]["current"] != true {
			t.Errorf("tree %v; want the root then its two forks at depth 1, the second current", tree.Tree)
		}
		tree.Parent, tree.Children = nil, nil
		s.mustCall(t, http.MethodGet, "/api/conversations/"+root.String()+"/forks", "", http.StatusOK, &tree)
		if len(tree.Children) != 2 || tree.Parent != nil {
			t.Errorf("fork tree of the root: parent %v, %d children; want none and 2", tree.Parent, len(tree.Children))
		}

		var page struct {
			Conversations []struct {
				ID uuid.UUID `json:"id"`
			} `json:"conversations"`
			Next string `json:"next"`
		}
		seen := map[uuid.UUID]bool{}
		path := "/api/conversations?limit=2"
		for range 3 {
			page.Next = ""
			s.mustCall(t, http.MethodGet, path, "", http.StatusOK, &page)
			for _, c := range page.Conversations {
				if seen[c.ID] {
					t.Errorf("conversation %s listed twice", c.ID)
				}
				seen[c.ID] = true
			}
			if page.Next == "" {
				break
			}
			path = "/api/conversations?limit=2&before=" + page.Next
		}
		if len(seen) != 3 {
			t.Errorf("listed %d conversations over the pages; want 3", len(seen))
		}
		if code, _ := s.call(t, http.MethodGet, "/api/conversations?before=nonsense", "", nil, nil); code != http.StatusBadRequest {
			t.Errorf("a malformed cursor = %d; want 400", code)
		}
	})
}

// TestDecideApproval: the person a confirmation asks sees it in
// GET /api/approvals and decides it over the API with their session; the
// call then runs and the turn goes on. A second decision is refused, and
// a person the conversation is not theirs to see cannot reach it.
func TestDecideApproval(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clk := newClock()
		ctx := context.Background()
		var ran atomic.Int32
		register := func(r *tool.Registry) {
			tool.MustRegister(r, tool.Def{Name: "launch", Description: "risky", Risk: tool.RiskHigh},
				func(ctx context.Context, _ *tool.Request, in struct{}) (map[string]string, error) {
					ran.Add(1)
					return map[string]string{"launched": "yes"}, nil
				})
		}
		signin, err := web.NewSignIn(web.SignInOptions{Store: st, PublicURL: "https://console.example.com", Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		var s *server
		s = startWith(t, st, clk, writeScript(t, `
turns:
  - after_tool: launch
    text: "Launched."
  - when_last_user_contains: launch
    tool_calls:
      - {name: launch, input: {}}
`), web.Options{Token: "op", SignIn: signin, Actor: actorFunc(func(ctx context.Context, a *core.Action) (*core.ActionResult, error) { return s.svc.Act(ctx, a) })}, register)
		session := func(person uuid.UUID) *browser {
			if _, err := st.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: person}); err != nil {
				t.Fatal(err)
			}
			link, err := signin.Link(ctx, person)
			if err != nil {
				t.Fatal(err)
			}
			b, code, _ := signIn(t, s, "/auth/link", strings.SplitN(link, "t=", 2)[1])
			if code != http.StatusOK {
				t.Fatalf("signing in = %d", code)
			}
			return b
		}
		ana, bo := session(uuid.New()), session(uuid.New())
		code, raw := ana.call(t, http.MethodPost, "/api/conversations", "{}", nil)
		if code != http.StatusCreated {
			t.Fatalf("creating = %d %s", code, raw)
		}
		var conv conversationOut
		_ = json.Unmarshal([]byte(raw), &conv)
		if code, raw := ana.call(t, http.MethodPost, "/api/conversations/"+conv.ID.String()+"/messages", `{"text": "launch it"}`, nil); code != http.StatusAccepted {
			t.Fatalf("posting = %d %s", code, raw)
		}
		waitStatus(t, st, conv.ID, store.ConversationPaused)
		// The first message named the conversation.
		var named struct {
			Title string `json:"title"`
		}
		if _, raw := ana.call(t, http.MethodGet, "/api/conversations/"+conv.ID.String(), "", nil); json.Unmarshal([]byte(raw), &named) != nil || named.Title != "launch it" {
			t.Errorf("the conversation after its first message = %s; want the title \"launch it\"", raw)
		}
		var inbox struct {
			Approvals []struct {
				CallID         string    `json:"call_id"`
				ConversationID uuid.UUID `json:"conversation_id"`
				Tool           string    `json:"tool"`
			} `json:"approvals"`
		}
		// Many conversations of ana's workspace active since: the inbox
		// still lists the one waiting, however far down it is.
		ws, err := st.ConversationWorkspace(ctx, conv.ID)
		if err != nil || ws == nil {
			t.Fatalf("ana's conversation's workspace = %v, %v", ws, err)
		}
		for i := range 210 {
			c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Now().Add(time.Duration(i+1) * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: *ws}); err != nil {
				t.Fatal(err)
			}
		}
		_, raw = ana.call(t, http.MethodGet, "/api/approvals", "", nil)
		if err := json.Unmarshal([]byte(raw), &inbox); err != nil || len(inbox.Approvals) != 1 || inbox.Approvals[0].Tool != "launch" {
			t.Fatalf("ana's inbox = %s; want the launch confirmation", raw)
		}
		// The inbox and GET /api/approvals/{id} show an approval alike.
		var listed []web.ApprovalJSON
		var shape struct {
			Approvals *[]web.ApprovalJSON `json:"approvals"`
		}
		shape.Approvals = &listed
		_ = json.Unmarshal([]byte(raw), &shape)
		code, one := ana.call(t, http.MethodGet, "/api/approvals/"+listed[0].ID, "", nil)
		var got web.ApprovalJSON
		if err := json.Unmarshal([]byte(one), &got); code != http.StatusOK || err != nil || !reflect.DeepEqual(got, listed[0]) {
			t.Fatalf("GET /api/approvals/%s = %d %s; want as the inbox lists it: %+v", listed[0].ID, code, one, listed[0])
		}
		if got.Status != "pending" || got.Kind != "confirm" || got.ConversationID != conv.ID.String() {
			t.Errorf("the listed approval %+v; want a pending confirmation of %s", got, conv.ID)
		}
		if _, raw := bo.call(t, http.MethodGet, "/api/approvals", "", nil); strings.Contains(raw, conv.ID.String()) {
			t.Errorf("bo's inbox shows ana's approval: %s", raw)
		}
		body := fmt.Sprintf(`{"call_id": %q, "value": "approve"}`, inbox.Approvals[0].CallID)
		path := "/api/conversations/" + conv.ID.String() + "/decide"
		if code, raw := bo.call(t, http.MethodPost, path, body, nil); code != http.StatusNotFound {
			t.Errorf("bo deciding ana's approval = %d %s; want 404", code, raw)
		}
		code, raw = ana.call(t, http.MethodPost, path, body, nil)
		var decided web.ApprovalJSON
		if err := json.Unmarshal([]byte(raw), &decided); code != http.StatusOK || err != nil || decided.ID != got.ID || decided.Status != "approved" || decided.DecidedBy == "" {
			t.Fatalf("ana approving = %d %s; want 200 and the approved approval", code, raw)
		}
		if _, raw := ana.call(t, http.MethodGet, "/api/approvals", "", nil); strings.Contains(raw, got.ID) {
			t.Errorf("the inbox after the decision = %s; want it gone", raw)
		}
		if code, raw := ana.call(t, http.MethodPost, "/api/approvals/"+got.ID, `{"choice": "deny"}`, nil); code != http.StatusConflict {
			t.Errorf("deciding again by id = %d %s; want 409", code, raw)
		}
		waitStatus(t, st, conv.ID, store.ConversationIdle)
		if ran.Load() != 1 {
			t.Errorf("the tool ran %d times after the approval; want 1", ran.Load())
		}
		if _, raw := ana.call(t, http.MethodGet, "/api/conversations/"+conv.ID.String()+"/entries", "", nil); !strings.Contains(raw, `"text":"Launched."`) {
			t.Errorf("the log %s; want the turn gone on to \"Launched.\"", raw)
		}
		if code, raw := ana.call(t, http.MethodPost, path, body, nil); code != http.StatusConflict {
			t.Errorf("deciding twice = %d %s; want 409", code, raw)
		}
	})
}

type actorFunc func(ctx context.Context, a *core.Action) (*core.ActionResult, error)

func (f actorFunc) Act(ctx context.Context, a *core.Action) (*core.ActionResult, error) {
	return f(ctx, a)
}
