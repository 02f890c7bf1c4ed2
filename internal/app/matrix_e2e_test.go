package app_test

// End-to-end tests of Matrix through the real service: app.Open wires the
// store (SQLite, and Postgres when TEST_DATABASE_URL is set), core, the
// worker, the delivery router and the Matrix adapter; the only fakes are
// the homeserver (internal/matrixtest, spoken to by mautrix-go) and the
// model (the scripted backend, with discordScript's script: its keywords
// are platform-neutral). Every helper here carries a matrix prefix.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/matrixtest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// matrixEnv is one running service and the fake homeserver it talks to.
type matrixEnv struct {
	tb    testing.TB
	app   *app.App
	fake  *matrixtest.Server
	store store.Store
	alice matrixtest.User
	// db, script and config started the service; restart starts it again
	// with them.
	db, script, config string
}

// matrixStart opens and starts the service on db with switchboard.yaml
// config, connected to a new fake homeserver, and waits until the bot
// syncs live.
func matrixStart(tb testing.TB, db string, chunkDelay time.Duration, config string) *matrixEnv {
	tb.Helper()
	fake := matrixtest.NewServer(tb)
	alice := fake.NewUser("alice", "alice")
	e := matrixStartOn(tb, fake, db, discordScript(tb, chunkDelay), config)
	e.alice = alice
	return e
}

func matrixStartOn(tb testing.TB, fake *matrixtest.Server, db, script, config string) *matrixEnv {
	tb.Helper()
	before := fake.Syncs().Requests
	env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
	cfg := app.Config{
		Addr:        "127.0.0.1:0",
		DatabaseURL: db,
		MatrixSettings: app.MatrixSettings{
			MatrixHomeserverURL: fake.URL, MatrixUserID: fake.Bot.ID, MatrixAccessToken: fake.Token,
		},
		ConfigPath: writeConfig(tb, config),
		Env:        func(k string) string { return env[k] },
		Logger:     testenv.Logger(tb),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("opening the service: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		_ = a.Stop(context.Background())
		tb.Fatalf("starting the service: %v", err)
	}
	tb.Cleanup(func() { _ = a.Stop(context.Background()) })
	fake.Wait(tb, "the new service to hold a /sync open", func() bool {
		st := fake.Syncs()
		return st.Live > 0 && st.Requests > before+1
	})
	return &matrixEnv{tb: tb, app: a, fake: fake, store: a.Store, db: db, script: script, config: config}
}

// restart stops the service gracefully and starts a new one on the same
// database and homeserver.
func (e *matrixEnv) restart() *matrixEnv {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := e.app.Stop(ctx); err != nil {
		e.tb.Fatalf("stopping the service: %v", err)
	}
	n := matrixStartOn(e.tb, e.fake, e.db, e.script, e.config)
	n.alice = e.alice
	return n
}

// room makes a group room of alice's (and others') with the bot in it.
func (e *matrixEnv) room(members ...matrixtest.User) string {
	return e.fake.CreateRoom(e.alice, matrixtest.RoomOptions{Name: "team", Members: members})
}

// dm makes user's direct chat with the bot and waits until the bot joined.
func (e *matrixEnv) dm(user matrixtest.User) string {
	e.tb.Helper()
	room := e.fake.DM(user)
	e.fake.Wait(e.tb, "the bot to join "+user.ID+"'s direct chat", func() bool {
		return e.fake.Membership(room, e.fake.Bot.ID) == "join"
	})
	return room
}

// waitBot waits until a bot message in room reads want (edits applied)
// and returns it.
func (e *matrixEnv) waitBot(room, want string) *matrixtest.Message {
	e.tb.Helper()
	var found *matrixtest.Message
	e.fake.Wait(e.tb, fmt.Sprintf("a bot message reading %q in %s", want, room), func() bool {
		for _, m := range e.fake.BotMessages(room) {
			if strings.Contains(m.Body, want) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// binding is the binding of a place, or nil.
func (e *matrixEnv) binding(room, thread string) *store.Binding {
	e.tb.Helper()
	b, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("matrix", "", room, thread)})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		e.tb.Fatalf("finding the binding of %s/%s: %v", room, thread, err)
	}
	return b
}

// settle waits until the place's conversation has no turn queued or
// running and its log is all delivered; it returns the conversation.
func (e *matrixEnv) settle(room, thread string) uuid.UUID {
	e.tb.Helper()
	ctx := context.Background()
	var conv uuid.UUID
	discordPoll(e.tb, "the conversation of "+room+"/"+thread+" to settle", func() (bool, string) {
		b := e.binding(room, thread)
		if b == nil {
			return false, "no binding yet"
		}
		conv = b.ConversationID
		items, err := e.store.WorkList(ctx, &store.WorkListParams{
			States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, ConversationID: &conv, Limit: 10,
		})
		if err != nil {
			return false, err.Error()
		}
		c, err := e.store.ConversationGet(ctx, conv)
		if err != nil {
			return false, err.Error()
		}
		return len(items) == 0 && b.DeliveredSeq == c.LastSeq,
			fmt.Sprintf("%d work items, delivered seq %d of %d", len(items), b.DeliveredSeq, c.LastSeq)
	})
	return conv
}

// waitIdle waits until no work is queued or running anywhere.
func (e *matrixEnv) waitIdle() {
	e.tb.Helper()
	discordPoll(e.tb, "the work queue to drain", func() (bool, string) {
		items, err := e.store.WorkList(context.Background(), &store.WorkListParams{
			States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 5,
		})
		return err == nil && len(items) == 0, fmt.Sprint(items, err)
	})
}

// matrixFallback is what the script answers to a message without a
// keyword: the message under its speaker's display name.
func matrixFallback(user matrixtest.User, text string) string {
	return "Hello from the scripted model. You said: [" + user.Name + "] " + text
}

// TestMatrixMentionStreamsOneReplyInThread: a mention at the top of a room
// is answered in a thread rooted at it, in one message streamed by edits
// (m.replace), ending with the whole text; the thread then goes on without
// a mention, and a top-level message without one is left alone.
func TestMatrixMentionStreamsOneReplyInThread(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := matrixStart(t, db, 100*time.Millisecond, openAccess)
		bob := e.fake.NewUser("bob", "bob")
		room := e.room(bob)
		want := discordStreamText()
		q := e.fake.Mention(room, e.alice, discordStreamKeyword)

		reply := e.waitBot(room, want)
		conv := e.settle(room, q)
		checkOneExchange(t, e.store, conv, discordStreamKeyword, want)
		msgs := e.fake.BotMessages(room)
		if len(msgs) != 1 || msgs[0].Body != want {
			t.Fatalf("bot messages: %+v; want exactly one reading the whole reply", msgs)
		}
		if reply.Thread != q || reply.ReplyTo != q {
			t.Errorf("the reply is in thread %q replying to %q; want the thread rooted at the question %s", reply.Thread, reply.ReplyTo, q)
		}
		if reply.Edits < 2 {
			t.Errorf("the reply was edited %d times; want it streamed by several edits", reply.Edits)
		}
		if !strings.Contains(reply.HTML, "word30") && reply.HTML != "" {
			t.Errorf("formatted_body %q does not carry the text", reply.HTML)
		}

		// In the thread, without a mention: the same conversation answers.
		e.fake.InThread(room, bob, q, "and a follow-up", false)
		e.waitBot(room, matrixFallback(bob, "and a follow-up"))
		if got := e.settle(room, q); got != conv {
			t.Errorf("the follow-up went to conversation %s; want the thread's %s", got, conv)
		}
		// At the top, without a mention: nobody answers.
		e.fake.Say(room, bob, "just chatting")
		e.waitIdle()
		for _, m := range e.fake.BotMessages(room) {
			if strings.Contains(m.Body, "just chatting") {
				t.Errorf("the bot answered a top-level message that did not mention it: %q", m.Body)
			}
		}
	})
}

// TestMatrixDirectChat: an invite to a direct chat is accepted, and a
// message there is answered in the main timeline, without a mention.
func TestMatrixDirectChat(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := matrixStart(t, db, 0, openAccess)
		room := e.dm(e.alice)
		e.fake.Say(room, e.alice, "hello there")
		reply := e.waitBot(room, matrixFallback(e.alice, "hello there"))
		if reply.Thread != "" {
			t.Errorf("the DM reply is in thread %q; want the main timeline", reply.Thread)
		}
		conv := e.settle(room, "")
		checkOneExchange(t, e.store, conv, "hello there", matrixFallback(e.alice, "hello there"))
	})
}

// TestMatrixOptionReactionResumesTurn: ask_user's question is posted with
// numbered options the bot reacts with; alice's reaction is the click, which
// resumes the turn once: reacting again, or the bot's own reactions, change
// nothing.
func TestMatrixOptionReactionResumesTurn(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := matrixStart(t, db, 0, openAccess)
		room := e.room()
		root := e.fake.Mention(room, e.alice, discordAskKeyword)
		e.waitBot(room, discordAskIntro)
		q := e.waitBot(room, discordQuestion)
		e.fake.Wait(t, "the bot's option reactions", func() bool {
			for _, m := range e.fake.BotMessages(room) {
				if m.ID == q.ID {
					return len(m.Reactions) == 2
				}
			}
			return false
		})
		if !strings.Contains(q.Body, "1️⃣ Red") || !strings.Contains(q.Body, "2️⃣ Blue") {
			t.Fatalf("the question reads %q; want numbered options Red and Blue", q.Body)
		}
		conv := e.settle(room, root)
		if res := logEntries(t, e.store, conv, store.EntryToolResult); len(res) != 0 {
			t.Fatalf("%d tool results before any choice; want none", len(res))
		}

		e.fake.React(room, e.alice, q.ID, "2️⃣")
		e.waitBot(room, "Noted:")
		e.settle(room, root)
		e.fake.React(room, e.alice, q.ID, "1\u20e3") // the same key without its variation selector
		e.waitIdle()

		results := logEntries(t, e.store, conv, store.EntryToolResult)
		if len(results) != 1 || !strings.Contains(string(decode[core.ToolResultContent](t, results[0]).Output), "Blue") {
			t.Fatalf("tool results %v; want exactly one answering Blue", results)
		}
		var noted int
		for _, m := range e.fake.BotMessages(room) {
			if strings.Contains(m.Body, "Noted:") {
				noted++
			}
			if m.ID == q.ID && !strings.Contains(m.Body, "**Blue** — chosen by alice") {
				t.Errorf("the question now reads %q; want it to show the choice", m.Body)
			}
		}
		if noted != 1 {
			t.Errorf("%d resumed replies; want exactly 1", noted)
		}
	})
}

// TestMatrixFiles: a file sent with a mention reaches the model as an
// attachment, downloaded through the authenticated media API; a chart the
// agent draws is uploaded and posted as an m.image in the thread.
func TestMatrixFiles(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := matrixStart(t, db, 0, openAccess)
		room := e.room()
		png := []byte("\x89PNG\r\n\x1a\nnot really a picture")
		q, _ := e.fake.SendFile(room, e.alice, "plan.png", "image/png", png, "look at this", true)
		e.waitBot(room, "[alice] look at this")
		conv := e.settle(room, q)
		users := logEntries(t, e.store, conv, store.EntryUser)
		if len(users) != 1 {
			t.Fatalf("%d user entries; want 1", len(users))
		}
		uc := decode[core.UserContent](t, users[0])
		if len(uc.Files) != 1 || string(uc.Files[0].Data) != string(png) || uc.Files[0].Name != "plan.png" || uc.Files[0].MimeType != "image/png" {
			t.Fatalf("the user entry's files are %+v; want plan.png with its bytes", uc.Files)
		}
		if len(e.fake.CallsTo(matrixtest.RouteDownload)) == 0 {
			t.Errorf("no download through the authenticated media API")
		}

		q2 := e.fake.Mention(room, e.alice, discordStepsKeyword)
		e.waitBot(room, discordStepTwo)
		e.settle(room, q2)
		var image *matrixtest.Message
		for _, m := range e.fake.BotMessages(room) {
			if m.MsgType == "m.image" && m.Thread == q2 {
				image = m
			}
		}
		if image == nil {
			t.Fatalf("no m.image in the thread of %s; bot messages: %+v", q2, e.fake.BotMessages(room))
		}
		data, ct, _, ok := e.fake.Media(image.URL)
		if !ok || ct != "image/png" || len(data) < 8 || string(data[1:4]) != "PNG" {
			t.Errorf("the image's media %s: %d bytes of %q (found %v); want an uploaded PNG", image.URL, len(data), ct, ok)
		}
	})
}

// TestMatrixPairingFlow: a stranger's direct chat gets a pairing code and
// nothing reaches an agent; an admin approves it with !approve in their own
// direct chat; the stranger is then answered. A stranger's invite to a
// group room is declined.
func TestMatrixPairingFlow(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := matrixStart(t, db, 0, "access:\n  admins: [\"@boss:localhost\"]\n")
		stranger := e.fake.NewUser("stranger", "stranger")
		boss := e.fake.NewUser("boss", "boss")
		before := countRows(t, db)

		group := e.fake.CreateRoom(stranger, matrixtest.RoomOptions{Name: "strangers", InviteBot: true})
		dm := e.dm(stranger)
		e.fake.Say(dm, stranger, "hello bot")
		code := pairingCode(t, e.waitBot(dm, "pairing code is").Body)
		if got := countRows(t, db); got != before {
			t.Fatalf("a stranger's DM left rows behind: %+v, before %+v", got, before)
		}
		if m := e.fake.Membership(group, e.fake.Bot.ID); m == "join" {
			t.Errorf("the bot joined a stranger's group room; want the invite declined")
		}

		bossDM := e.dm(boss)
		e.fake.Say(bossDM, boss, "!approve "+code)
		e.waitBot(bossDM, "Approved")
		e.fake.Say(dm, stranger, "hello again")
		e.waitBot(dm, matrixFallback(stranger, "hello again"))

		// Paired now, the stranger may bring the bot into a room of theirs.
		room := e.fake.CreateRoom(stranger, matrixtest.RoomOptions{Name: "paired", InviteBot: true})
		e.fake.Wait(t, "the bot to join the paired person's room", func() bool {
			return e.fake.Membership(room, e.fake.Bot.ID) == "join"
		})
		q := e.fake.Mention(room, stranger, "in a room")
		e.waitBot(room, matrixFallback(stranger, "in a room"))
		e.settle(room, q)
		e.waitIdle()
	})
}

// TestMatrixRestartNeitherLosesNorRepeats: the sync token is kept in the
// store: messages sent while the service is down are answered once after
// the restart, and what was answered before is not answered again. A
// rate-limited send (429 M_LIMIT_EXCEEDED) is waited out and posted once.
func TestMatrixRestartNeitherLosesNorRepeats(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := matrixStart(t, db, 0, openAccess)
		room := e.dm(e.alice)
		e.fake.Say(room, e.alice, "first")
		e.waitBot(room, matrixFallback(e.alice, "first"))
		e.settle(room, "")

		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()
		if err := e.app.Stop(ctx); err != nil {
			t.Fatalf("stopping: %v", err)
		}
		e.fake.Say(room, e.alice, "while you were away")
		e.fake.Limit(matrixtest.RouteSend, 2, 200*time.Millisecond)
		e = matrixStartOn(t, e.fake, e.db, e.script, e.config)
		e.waitBot(room, matrixFallback(matrixtest.User{Name: "alice"}, "while you were away"))
		e.settle(room, "")
		e.waitIdle()
		counts := map[string]int{}
		for _, m := range e.fake.BotMessages(room) {
			counts[m.Body]++
		}
		for _, text := range []string{"first", "while you were away"} {
			if n := counts[matrixFallback(matrixtest.User{Name: "alice"}, text)]; n != 1 {
				t.Errorf("%d replies to %q; want exactly 1 (bot messages %v)", n, text, counts)
			}
		}
		limited := 0
		for _, c := range e.fake.CallsTo(matrixtest.RouteSend) {
			if c.Status == 429 {
				limited++
			}
		}
		if limited != 2 {
			t.Errorf("%d sends were rate limited; want the 2 the fake was told to refuse", limited)
		}
	})
}
