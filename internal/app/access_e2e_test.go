package app_test

// End-to-end tests of who may talk to agents (package access) through the
// real service and the platform fakes: the DM pairing flow on Slack and
// Discord, an allowlist refusal that stores nothing, one polite reply a day,
// and the channel policy.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, to count rows

	"github.com/switchboardhq/switchboard/core/access"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// rowCounts counts the rows a message could leave behind.
type rowCounts struct{ Conversations, Entries, Work, Bindings int }

// countRows counts them straight in the database behind dbURL.
func countRows(tb testing.TB, dbURL string) rowCounts {
	tb.Helper()
	t, err := dial.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	prefix, work := "", "work"
	var db *sql.DB
	if t.Driver == "sqlite" {
		db, err = sql.Open("sqlite", "file:"+t.Path+"?mode=ro")
	} else {
		db, err = sql.Open("pgx", t.URL)
		prefix, work = `"`+t.Schema+`".`, "work_items"
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var c rowCounts
	for _, q := range []struct {
		table string
		into  *int
	}{{"conversations", &c.Conversations}, {"entries", &c.Entries}, {work, &c.Work}, {"bindings", &c.Bindings}} {
		if err := db.QueryRow("SELECT count(*) FROM " + prefix + q.table).Scan(q.into); err != nil {
			tb.Fatalf("counting %s: %v", q.table, err)
		}
	}
	return c
}

var codeRE = regexp.MustCompile(`pairing code is ([A-Z0-9]{8})`)

// pairingCode reads the code out of a pairing notice.
func pairingCode(tb testing.TB, notice string) string {
	tb.Helper()
	m := codeRE.FindStringSubmatch(notice)
	if m == nil {
		tb.Fatalf("the reply %q carries no pairing code", notice)
	}
	return m[1]
}

// apiCall sends a JSON request to the service's API and decodes the answer.
func apiCall(tb testing.TB, method, url string, out any) int {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			tb.Fatalf("decoding the answer of %s %s: %v", method, url, err)
		}
	}
	return resp.StatusCode
}

// scriptedReply is the scripted model's answer to text from the person
// shown to it as user (the fake Slack names a user "User <id>").
func scriptedReply(user, text string) string {
	return "Hello from the scripted model. You said: [" + user + "] " + text
}

const admin = "U0ADMIN"

// TestSlackPairingFlow: a stranger's DM reaches no agent, stores nothing and
// gets a code; the operator approves it through the API (and an admin
// another stranger's with !approve); the next DM is answered.
func TestSlackPairingFlow(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		e := startSlack(t, url, envOptions{config: "access:\n  admins: [" + admin + "]\n"})
		before := countRows(t, url)

		e.mustPost(newEvent("EvStranger1", directMessage("D0MAL", "1700000700.000001", mallory, "hello")))
		notice := e.waitReply("D0MAL", "pairing code is")
		code := pairingCode(t, shown(notice))
		e.mustPost(newEvent("EvStranger2", directMessage("D0MAL", "1700000700.000002", mallory, "hello?")))
		if got := countRows(t, url); got != before {
			t.Fatalf("a stranger's DMs left rows behind: %+v, before %+v", got, before)
		}

		var list struct {
			Pending []struct {
				Code   string `json:"code"`
				UserID string `json:"user_id"`
			} `json:"pending"`
		}
		if st := apiCall(t, "GET", e.base+"/api/pairing", &list); st != http.StatusOK || len(list.Pending) != 1 ||
			list.Pending[0].Code != code || list.Pending[0].UserID != mallory {
			t.Fatalf("GET /api/pairing = %d %+v, want mallory's code %s", st, list, code)
		}
		if st := apiCall(t, "POST", e.base+"/api/pairing/NOTACODE/approve", nil); st != http.StatusNotFound {
			t.Errorf("approving an unknown code answered %d, want 404", st)
		}
		if st := apiCall(t, "POST", e.base+"/api/pairing/"+strings.ToLower(code)+"/approve", nil); st != http.StatusOK {
			t.Fatalf("POST /api/pairing/%s/approve answered %d, want 200", code, st)
		}

		e.mustPost(newEvent("EvStranger3", directMessage("D0MAL", "1700000700.000003", mallory, "now?")))
		e.waitReply("D0MAL", scriptedReply("User "+mallory, "now?"))
		e.waitIdle()
		var notices int
		for _, m := range e.botMessages("D0MAL") {
			if strings.Contains(shown(m), "pairing code") {
				notices++
			}
		}
		if notices != 1 {
			t.Errorf("mallory got %d pairing notices, want exactly 1 (one reply a day)", notices)
		}
		conv := e.conversation("D0MAL", "")
		if users := logEntries(t, e.store, conv.ID, store.EntryUser); len(users) != 1 {
			t.Errorf("mallory's conversation has %d user entries, want 1 (the refused ones are stored nowhere)", len(users))
		}

		// Another stranger, approved by an admin in their own DM.
		const eve = "U0EVE"
		e.mustPost(newEvent("EvEve1", directMessage("D0EVE", "1700000800.000001", eve, "hi")))
		eveCode := pairingCode(t, shown(e.waitReply("D0EVE", "pairing code is")))
		e.mustPost(newEvent("EvNotAdmin", directMessage("D0MAL", "1700000800.000002", mallory, "!approve "+eveCode)))
		e.waitReply("D0MAL", "Only an admin can approve")
		e.mustPost(newEvent("EvAdmin", directMessage("D0ADMIN", "1700000800.000003", admin, "!approve "+eveCode)))
		e.waitReply("D0ADMIN", "Approved")
		e.mustPost(newEvent("EvEve2", directMessage("D0EVE", "1700000800.000004", eve, "hi again")))
		e.waitReply("D0EVE", scriptedReply("User "+eve, "hi again"))
		e.waitIdle()
	})
}

// TestSlackAllowlistRefusalOncePerDay: under allowlist, a DM of someone not
// listed stores nothing and is answered with one polite reply a day.
func TestSlackAllowlistRefusalOncePerDay(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		var offset atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		e := startSlack(t, url, envOptions{now: now, config: "access:\n  dm_policy: allowlist\n  allowlist: [" + alice + "]\n"})
		before := countRows(t, url)
		notices := func() int {
			n := 0
			for _, m := range e.botMessages("D0MAL") {
				if shown(m) == access.NoticeAllowlist {
					n++
				}
			}
			return n
		}

		e.mustPost(newEvent("EvRefused1", directMessage("D0MAL", "1700000900.000001", mallory, "let me in")))
		e.waitReply("D0MAL", access.NoticeAllowlist)
		e.mustPost(newEvent("EvRefused2", directMessage("D0MAL", "1700000900.000002", mallory, "please")))
		// Alice is listed: her answer is the sign that the service went on.
		e.mustPost(newEvent("EvAllowed", directMessage("D0ALICE", "1700000900.000003", alice, "am I in")))
		e.waitReply("D0ALICE", fallbackReply("am I in"))
		e.waitIdle()
		if n := notices(); n != 1 {
			t.Fatalf("mallory got %d refusals the same day, want 1", n)
		}
		after := countRows(t, url)
		if after.Conversations != before.Conversations+1 || after.Bindings != before.Bindings+1 {
			t.Errorf("rows after one allowed and two refused DMs: %+v, before %+v; want only alice's conversation", after, before)
		}
		if _, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, "D0MAL", "")}); err == nil {
			t.Errorf("mallory's refused DM got a conversation")
		}

		offset.Add(int64(24 * time.Hour))
		next := newEvent("EvRefused3", directMessage("D0MAL", "1700000900.000004", mallory, "a day later"))
		next.signedAt = now() // the service checks the signature's age on its own clock
		e.mustPost(next)
		poll(t, "a second refusal on the next day", func() (bool, string) { return notices() == 2, fmt.Sprint(notices()) })
	})
}

// TestSlackChannelPolicy: agents answer only in the channels listed, with a
// mention unless the channel's rule needs none; a mention elsewhere gets an
// ephemeral refusal and stores nothing.
func TestSlackChannelPolicy(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		e := startSlack(t, url, envOptions{config: `access:
  answer_in: [C0FREE, C0MENTION]
  channels:
    C0FREE: {require_mention: false}
`})
		plain := func(channel, ts, text string) map[string]any {
			return map[string]any{"type": "message", "channel_type": "channel", "user": alice, "text": text,
				"ts": ts, "channel": channel, "team": e2eTeam, "event_ts": ts}
		}
		before := countRows(t, url)
		e.mustPost(newEvent("EvElsewhere", mention("C0ELSE", "1700001000.000001", "", alice, "anyone?")))
		eph := e.waitCalls("chat.postEphemeral", 1)
		if p := eph[0].Params; p.Get("channel") != "C0ELSE" || p.Get("user") != alice || !strings.Contains(p.Get("text")+p.Get("blocks"), "don't answer in this channel") {
			t.Errorf("the refusal was %v, want an ephemeral note to %s in C0ELSE", p, alice)
		}
		e.mustPost(newEvent("EvUnmentioned", plain("C0MENTION", "1700001000.000002", "no mention here")))
		if got := countRows(t, url); got != before {
			t.Fatalf("a refused mention and an unaddressed message left rows: %+v, before %+v", got, before)
		}

		e.mustPost(newEvent("EvFree", plain("C0FREE", "1700001000.000003", "no mention needed")))
		e.waitReply("C0FREE", fallbackReply("no mention needed"))
		e.mustPost(newEvent("EvMentioned", mention("C0MENTION", "1700001000.000004", "", alice, "with a mention")))
		e.waitReply("C0MENTION", fallbackReply("with a mention"))
		e.waitIdle()
		if msgs := e.botMessages("C0ELSE"); len(msgs) != 0 {
			t.Errorf("the bot posted in a channel it does not answer in: %+v", msgs)
		}
	})
}

// TestDiscordPairingFlow: the pairing flow in Discord DMs, approved by an
// admin with !approve.
func TestDiscordPairingFlow(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartWith(t, db, 0, "access:\n  admins: [\"9001\"]\n")
		stranger := discordgo.User{ID: "7001", Username: "stranger"}
		boss := discordgo.User{ID: "9001", Username: "boss"}
		dm := e.fake.DMChannel(stranger)
		before := countRows(t, db)

		e.fake.UserMessage(dm, stranger, "hello bot")
		code := pairingCode(t, e.waitBotMessage(dm, "pairing code is").Content)
		if got := countRows(t, db); got != before {
			t.Fatalf("a stranger's DM left rows behind: %+v, before %+v", got, before)
		}

		bossDM := e.fake.DMChannel(boss)
		e.fake.UserMessage(bossDM, boss, "!approve "+code)
		e.waitBotMessage(bossDM, "Approved")
		e.fake.UserMessage(dm, stranger, "hello again")
		e.waitBotMessage(dm, discordFallback(stranger, "hello again"))
		discordPoll(t, "the work queue to drain", func() (bool, string) {
			items, err := e.store.WorkList(context.Background(), &store.WorkListParams{
				States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 1,
			})
			return err == nil && len(items) == 0, fmt.Sprint(items, err)
		})
	})
}
