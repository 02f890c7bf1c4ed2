package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// midTurnModel is a fake Anthropic whose first reply ("Paris.") is held
// after its first event until release is closed, then answers "Madrid.".
func midTurnModel(t *testing.T) (*modeltest.Fake, chan struct{}) {
	t.Helper()
	fake := modeltest.NewAnthropic(t)
	release := make(chan struct{})
	fake.Push(modeltest.Reply{Text: "Paris.", Block: release}, modeltest.Reply{Text: "Madrid."})
	env := anthropicEnv(fake)
	// The backend reads the SDK's variables from the process.
	t.Setenv("ANTHROPIC_API_KEY", env["ANTHROPIC_API_KEY"])
	t.Setenv("ANTHROPIC_BASE_URL", env["ANTHROPIC_BASE_URL"])
	return fake, release
}

// checkBothAnswered checks the model side of a message B sent while A's
// turn streamed: two model calls, the second shown B after A's reply, and
// a log that ends with B's answer, each message answered once.
func checkBothAnswered(t *testing.T, st store.Store, fake *modeltest.Fake, conv uuid.UUID, msgB string) {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) != 2 || fake.Pending() != 0 {
		t.Fatalf("model calls = %d with %d replies unused; want 2: B's turn must call the model", len(reqs), fake.Pending())
	}
	if body := string(reqs[0].Body); strings.Contains(body, msgB) {
		t.Fatalf("the first call already showed B; the test did not send B mid-turn")
	}
	body := string(reqs[1].Body)
	if iPar, iB := strings.Index(body, "Paris."), strings.Index(body, msgB); iPar < 0 || iB < iPar {
		t.Fatalf("the second call shows A's reply at %d and B at %d; want B after the reply that did not see it", iPar, iB)
	}
	var answers []string
	for _, e := range logEntries(t, st, conv, store.EntryAssistant) {
		answers = append(answers, decode[core.AssistantContent](t, e).Text)
	}
	if len(answers) != 2 || answers[0] != "Paris." || answers[1] != "Madrid." {
		t.Fatalf("answers %q; want A's then B's", answers)
	}
}

// A message posted through the HTTP API while the previous turn still
// streams is answered: the SSE stream a client follows carries a reply
// after it (a helper testing the web console saw a turn with no reply).
func TestAPIMessageDuringTurnIsAnswered(t *testing.T) {
	const msgA, msgB = "What is the capital of France?", "And of Spain, please?"
	eachStoreInTurn(t, func(t *testing.T, db databaseFunc) {
		fake, release := midTurnModel(t)
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake)})
		var conv struct {
			ID uuid.UUID `json:"id"`
		}
		e.api(http.MethodPost, "/api/conversations", "{}", http.StatusCreated, &conv)
		events := e.follow(conv.ID)

		e.api(http.MethodPost, "/api/conversations/"+conv.ID.String()+"/messages", `{"text":"`+msgA+`"}`, http.StatusAccepted, nil)
		poll(t, "the model to stream A's reply", func() (bool, string) {
			return len(fake.Requests()) == 1, fmt.Sprint(len(fake.Requests()), " requests")
		})
		var posted struct {
			Seq int64 `json:"seq"`
		}
		e.api(http.MethodPost, "/api/conversations/"+conv.ID.String()+"/messages", `{"text":"`+msgB+`"}`, http.StatusAccepted, &posted)
		close(release)

		// What the client sees: entries in seq order, B before A's reply
		// (it landed first), and then a reply that answers B.
		var seen []string
		poll(t, "a reply after B on the stream", func() (bool, string) {
			for {
				select {
				case ev := <-events:
					seen = append(seen, ev)
				default:
					n := len(seen)
					return n == 4 && seen[3] == "assistant:Madrid.", strings.Join(seen, " | ")
				}
			}
		})
		want := []string{"user:" + msgA, "user:" + msgB, "assistant:Paris.", "assistant:Madrid."}
		if strings.Join(seen, " | ") != strings.Join(want, " | ") {
			t.Fatalf("stream entries %q, want %q", seen, want)
		}
		e.waitIdle()
		checkBothAnswered(t, e.store, fake, conv.ID, msgB)
	})
}

// The same through Slack, in one thread: B, sent in the thread while the
// answer to A streams, gets its own answer there.
func TestSlackMessageDuringTurnIsAnswered(t *testing.T) {
	const msgA, msgB = "What is the capital of France?", "And of Spain, please?"
	eachStoreInTurn(t, func(t *testing.T, db databaseFunc) {
		fake, release := midTurnModel(t)
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake)})
		const ch, ts = "C0MIDTURN", "1700000500.000100"
		e.mustPost(newEvent("EvMidA", mention(ch, ts, "", alice, msgA)))
		poll(t, "the model to stream A's reply", func() (bool, string) {
			return len(fake.Requests()) == 1, fmt.Sprint(len(fake.Requests()), " requests")
		})
		e.mustPost(newEvent("EvMidB", mention(ch, "1700000500.000200", ts, alice, msgB)))
		poll(t, "B in the log", func() (bool, string) {
			users := logEntries(t, e.store, e.conversation(ch, ts).ID, store.EntryUser)
			return len(users) == 2, fmt.Sprint(len(users), " user entries")
		})
		close(release)
		e.waitReply(ch, "Madrid.")
		e.waitIdle()
		var shownAll []string
		for _, m := range e.botMessages(ch) {
			if m.ThreadTS != ts {
				t.Errorf("bot message %q outside the thread (thread_ts %q)", shown(m), m.ThreadTS)
			}
			shownAll = append(shownAll, shown(m))
		}
		if len(shownAll) != 2 || shownAll[0] != "Paris." || shownAll[1] != "Madrid." {
			t.Fatalf("bot messages in the thread %q; want A's answer, then B's", shownAll)
		}
		checkBothAnswered(t, e.store, fake, e.conversation(ch, ts).ID, msgB)
	})
}

// api calls the service's HTTP API (no token: loopback) and decodes the
// answer into out when it is not nil.
func (e *slackEnv) api(method, path, body string, want int, out any) {
	e.tb.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewBufferString(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.http.Do(req)
	if err != nil {
		e.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		e.tb.Fatalf("%s %s = %d %s; want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.tb.Fatalf("%s %s: decoding %s: %v", method, path, raw, err)
		}
	}
}

// follow reads conv's SSE stream from the start until the test ends, and
// sends each entry event as "kind:text".
func (e *slackEnv) follow(conv uuid.UUID) <-chan string {
	e.tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/api/conversations/"+conv.String()+"/stream", nil)
	if err != nil {
		cancel()
		e.tb.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{}).Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		e.tb.Fatalf("opening the stream of %s: %v %v", conv, resp, err)
	}
	out := make(chan string, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "entry":
				var en struct {
					Kind    string `json:"kind"`
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &en) == nil {
					out <- en.Kind + ":" + en.Content.Text
				}
			case line == "":
				event = ""
			}
		}
	}()
	e.tb.Cleanup(func() {
		cancel()
		<-done
	})
	return out
}
