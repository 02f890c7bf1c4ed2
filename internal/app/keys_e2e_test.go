package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// Keys and sessions through the real service: the operator issues an agent
// key, the key is refused on ordinary requests and exchanged for a session
// that works, expires on the clock, and dies with its revoked key; a host
// token can only exchange; no token's secret is in the database.

const operatorToken = "operator-token-e2e"

type keysClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *keysClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *keysClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type keysAPI struct {
	t *testing.T
	a *app.App
}

// call sends one request and decodes the JSON answer.
func (c keysAPI) call(method, path, token string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	req.RemoteAddr = "203.0.113.7:4444" // not loopback: only tokens count
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	c.a.Mux.ServeHTTP(rec, req)
	out := map[string]any{}
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func (c keysAPI) want(method, path, token string, body any, status int, errHas string) map[string]any {
	c.t.Helper()
	got, out := c.call(method, path, token, body)
	if got != status {
		c.t.Fatalf("%s %s = %d %v; want %d", method, path, got, out, status)
	}
	if errHas != "" && !strings.Contains(keysStr(out["error"]), errHas) {
		c.t.Fatalf("%s %s error = %q; want it to say %q", method, path, out["error"], errHas)
	}
	return out
}

func keysStr(v any) string { s, _ := v.(string); return s }

func openKeysApp(t *testing.T, databaseURL string, clk *keysClock) keysAPI {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "slack_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script, "SWITCHBOARD_SESSION_TTL": "10m"}
	cfg, err := app.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.DatabaseURL, cfg.APIToken = "-", databaseURL, operatorToken
	cfg.Env = func(k string) string { return env[k] }
	cfg.Logger, cfg.Now = testenv.Logger(t), clk.Now
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("opening the service: %v", err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	return keysAPI{t: t, a: a}
}

// keysEachStore runs f on SQLite and on Postgres; at rest returns the whole
// database as bytes or text, for looking for secrets.
func keysEachStore(t *testing.T, f func(t *testing.T, databaseURL string, atRest func() string)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "switchboard.db")
		f(t, "sqlite:"+path, func() string {
			var all []byte
			for _, suffix := range []string{"", "-wal", "-shm"} {
				b, err := os.ReadFile(path + suffix)
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				all = append(all, b...)
			}
			return string(all)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dbURL := postgresDatabase(t)
		u, _ := url.Parse(dbURL)
		schema := u.Query().Get("switchboard_schema")
		f(t, dbURL, func() string { return keysDumpSchema(t, schema) })
	})
}

// keysDumpSchema is what pg_dump writes of schema, or, where pg_dump is not
// installed, every row of every table of schema as text.
func keysDumpSchema(t *testing.T, schema string) string {
	t.Helper()
	if _, err := exec.LookPath("pg_dump"); err == nil {
		out, err := exec.Command("pg_dump", "--schema="+schema, testenv.PostgresURL(t)).Output()
		if err != nil {
			t.Fatalf("pg_dump --schema=%s: %v", schema, err)
		}
		if !strings.Contains(string(out), "api_keys") {
			t.Fatalf("pg_dump of schema %s has no api_keys table; the check would prove nothing", schema)
		}
		return string(out)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, tbl := range tables {
		rows, err := conn.Query(ctx, "SELECT t::text FROM "+pgx.Identifier{schema, tbl}.Sanitize()+" t")
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		sb.WriteString(strings.Join(lines, "\n"))
	}
	if !strings.Contains(sb.String(), "sbk") && !strings.Contains(sb.String(), "switchboard") {
		t.Fatalf("the dump of schema %s holds no api_keys rows; the check would prove nothing", schema)
	}
	return sb.String()
}

// keysSecretOf is the part of a token the store must never hold.
func keysSecretOf(token string) string { return strings.SplitN(token, "_", 3)[2] }

func TestAgentKeyExchange(t *testing.T) {
	t.Parallel()
	keysEachStore(t, func(t *testing.T, databaseURL string, atRest func() string) {
		clk := &keysClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		c := openKeysApp(t, databaseURL, clk)

		issued := c.want("POST", "/api/keys", operatorToken, map[string]any{"agent": "switchboard", "label": "ci"}, 201, "")
		key := keysStr(issued["token"])
		if !strings.HasPrefix(key, keysStr(issued["id"])+"_") || !strings.HasPrefix(key, "sbk_") {
			t.Fatalf("agent key %q does not start with its id %q", key, issued["id"])
		}
		c.want("POST", "/api/keys", operatorToken, map[string]any{"agent": "nobody"}, 400, `agent "nobody" is not configured`)

		// The key itself is refused on an ordinary request, with the way out.
		c.want("POST", "/api/conversations", key, nil, 401, "exchange it at POST /api/auth/token")
		c.want("GET", "/api/auth/whoami", key, nil, 401, "exchange it")

		sess := c.want("POST", "/api/auth/token", key, nil, 201, "")
		token := keysStr(sess["token"])
		if !strings.HasPrefix(token, "sbs_") || sess["expires_in"] != float64(600) || sess["agent"] != "switchboard" {
			t.Fatalf("session = %v; want an sbs_ token of agent switchboard living 600s (SWITCHBOARD_SESSION_TTL=10m)", sess)
		}
		who := c.want("GET", "/api/auth/whoami", token, nil, 200, "")
		if who["kind"] != "agent" || who["name"] != "agent:switchboard" {
			t.Fatalf("whoami with a session = %v; want the agent", who)
		}
		conv := c.want("POST", "/api/conversations", token, map[string]any{}, 201, "")
		convPath := "/api/conversations/" + keysStr(conv["id"])
		c.want("GET", convPath, token, nil, 200, "")
		c.want("POST", convPath+"/messages", token, map[string]any{"text": "hello"}, 202, "")
		c.want("POST", "/api/conversations", token, map[string]any{"agent": "other"}, 403, "cannot open a conversation of agent other")
		// A session is not a key: it cannot mint more sessions or keys.
		c.want("POST", "/api/auth/token", token, nil, 403, "takes an agent key or a host token")
		c.want("POST", "/api/keys", token, map[string]any{"agent": "switchboard"}, 403, "only the operator")
		// The operator token cannot be exchanged either: it is no agent.
		c.want("POST", "/api/auth/token", operatorToken, nil, 403, "")

		// The session lives SWITCHBOARD_SESSION_TTL on the service's clock.
		clk.Advance(10*time.Minute - time.Second)
		c.want("GET", convPath, token, nil, 200, "")
		clk.Advance(time.Second)
		c.want("GET", convPath, token, nil, 401, "session expired")

		// A fresh session, then the key is revoked: both are refused.
		token = keysStr(c.want("POST", "/api/auth/token", key, nil, 201, "")["token"])
		c.want("GET", convPath, token, nil, 200, "")
		listed := c.want("GET", "/api/keys", operatorToken, nil, 200, "")
		if keys, _ := listed["keys"].([]any); len(keys) != 1 || strings.Contains(keysStr(keysJSON(t, listed)), keysSecretOf(key)) {
			t.Fatalf("GET /api/keys = %v; want the one key, without its secret", listed)
		}
		c.want("POST", "/api/keys/"+keysStr(issued["id"])+"/revoke", operatorToken, nil, 200, "")
		c.want("GET", convPath, token, nil, 401, "revoked")
		c.want("POST", "/api/auth/token", key, nil, 401, "revoked")

		// Nothing of a token's secret is at rest: only its hash.
		rest := atRest()
		for _, tok := range []string{key, token} {
			if strings.Contains(rest, keysSecretOf(tok)) {
				t.Fatalf("the database holds the secret of %s", tok[:20])
			}
		}
		if !strings.Contains(rest, strings.Split(key, "_")[1]) {
			t.Fatalf("the database does not hold the key's lookup id; the at-rest read missed the table")
		}
	})
}

func keysJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHostTokenOnlyExchanges(t *testing.T) {
	t.Parallel()
	keysEachStore(t, func(t *testing.T, databaseURL string, atRest func() string) {
		clk := &keysClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		c := openKeysApp(t, databaseURL, clk)
		host := keysStr(c.want("POST", "/api/keys", operatorToken, map[string]any{"kind": "host", "agents": []string{"switchboard"}}, 201, "")["token"])
		if !strings.HasPrefix(host, "sbh_") {
			t.Fatalf("host token %q; want sbh_…", host)
		}
		conv := c.want("POST", "/api/conversations", operatorToken, map[string]any{}, 201, "")
		for _, r := range []struct{ method, path string }{
			{"POST", "/api/conversations"},
			{"GET", "/api/conversations/" + keysStr(conv["id"])},
			{"POST", "/api/conversations/" + keysStr(conv["id"]) + "/messages"},
			{"GET", "/api/auth/whoami"},
			{"POST", "/api/keys"},
			{"GET", "/api/keys"},
			{"POST", "/api/tokens"},
		} {
			c.want(r.method, r.path, host, map[string]any{}, 403, "can only be exchanged")
		}
		c.want("POST", "/api/auth/token", host, map[string]any{"agent": "other"}, 403, "may act only as switchboard")
		sess := c.want("POST", "/api/auth/token", host, map[string]any{"agent": "switchboard"}, 201, "")
		who := c.want("GET", "/api/auth/whoami", keysStr(sess["token"]), nil, 200, "")
		if who["name"] != "agent:switchboard" {
			t.Fatalf("whoami with a host's session = %v; want agent:switchboard", who)
		}
		if strings.Contains(atRest(), keysSecretOf(host)) {
			t.Fatal("the database holds the host token's secret")
		}
	})
}
