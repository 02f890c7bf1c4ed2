//go:build chaos

package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// refusedDelay paces the model's words in TestRefusedUpload: the replies
// stream, but the test is about what stays on screen, not about timing.
const refusedDelay = 5 * time.Millisecond

// TestRefusedUpload: in one Slack thread, a turn answers, then a turn
// shares a file that Slack refuses for good (files.completeUploadExternal
// answers missing_scope, every time), then three more turns answer. The
// user must see every reply once, whole and closed (the one before the
// file too), and one short notice where the file would have been: nothing
// lost, doubled, cut or left streaming. CHAOS_RUNS threads, each its own
// conversation.
func TestRefusedUpload(t *testing.T) {
	runs := chaosRuns(t)
	p := newSlack(t)
	h := newHarness(t, database(t), p, refusedDelay)
	h.env = append(h.env, "SWITCHBOARD_PUBLIC_URL=https://sb.example.com")
	p.fake.Fail("files.completeUploadExternal", slacktest.Fault{Error: "missing_scope", Needed: "files:write", Always: true})
	h.start()

	var total refusedCounts
	for run := range runs {
		c := refusedRun(h, p, run)
		h.t.Logf("run %d: %+v", run, c)
		total.add(c)
	}
	h.stop(syscall.SIGTERM)
	if n := len(p.fake.Calls("files.completeUploadExternal")); n != runs {
		t.Errorf("files.completeUploadExternal called %d times in %d runs, want once a run: a refusal is not retried", n, runs)
	}
	line := fmt.Sprintf("tried %d, replies %d/%d, notices %d (want %d), lost %d, doubled %d, open streams %d, cut %d",
		runs, total.shown, total.want, total.notices, runs, total.lost, total.doubled, total.open, total.cut)
	fmt.Println(t.Name(), os.Getenv("CHAOS_DB"), line)
	if total.lost+total.doubled+total.open+total.cut > 0 || total.notices != runs {
		t.Fatalf("a user saw a broken conversation: %s", line)
	}
}

// refusedCounts is what a user sees in the threads of TestRefusedUpload.
type refusedCounts struct {
	want, shown, notices     int
	lost, doubled, open, cut int
}

func (c *refusedCounts) add(o refusedCounts) {
	c.want += o.want
	c.shown += o.shown
	c.notices += o.notices
	c.lost += o.lost
	c.doubled += o.doubled
	c.open += o.open
	c.cut += o.cut
}

// refusedRun plays one thread: five turns, the second of which shares the
// refused file between two pieces of text, and counts what it shows.
func refusedRun(h *harness, p *slack, run int) refusedCounts {
	h.t.Helper()
	input, _ := json.Marshal(map[string]string{"kind": "code", "title": "main.go", "language": "go", "content": "package main\n\nfunc main() {}\n"})
	say := func(turn int, what string) string {
		return fmt.Sprintf("Run %d, turn %d: %s. %s", run, turn, what, "Every word of it should stay on screen, once, and the stream should end.")
	}
	replies := []string{
		say(1, "a plain answer before anything goes wrong"),
		say(2, "the text before the file"),
		say(2, "the text after the file"),
		say(3, "the first answer after the refused file"),
		say(4, "the second answer after the refused file"),
		say(5, "the third answer after the refused file"),
	}
	h.model.Push(
		modeltest.Reply{Text: replies[0], Delay: refusedDelay},
		modeltest.Reply{Text: replies[1], Delay: refusedDelay, ToolCalls: []modeltest.ToolCall{{ID: fmt.Sprintf("toolu_art_%d", run), Name: "artifact_create", Input: string(input)}}},
		modeltest.Reply{Text: replies[2], Delay: refusedDelay},
		modeltest.Reply{Text: replies[3], Delay: refusedDelay},
		modeltest.Reply{Text: replies[4], Delay: refusedDelay},
		modeltest.Reply{Text: replies[5], Delay: refusedDelay},
	)
	root := fmt.Sprintf("%d.%06d", time.Now().Unix(), 500+run)
	waitFor := []int{0, 2, 3, 4, 5} // the reply each turn ends with
	for turn, last := range waitFor {
		id := fmt.Sprintf("EvRefused%d-%d-%d", run, turn, time.Now().UnixNano())
		if turn == 0 {
			h.mentionIn(channel, id, root, "say something")
		} else {
			ts := fmt.Sprintf("%d.%06d", time.Now().Unix(), 600+10*run+turn)
			h.replyIn(channel, id, root, ts, fmt.Sprintf("and now turn %d", turn+1))
		}
		h.mark(fmt.Sprintf("run %d: turn %d in %s", run, turn+1, root))
		if !poll(waitLong, func() bool { return p.shows(root, replies[last]) }) {
			h.t.Errorf("run %d turn %d: %q not shown within %s; messages:\n%s", run, turn+1, replies[last], waitLong, p.describe(root))
		}
		h.waitIdle()
	}

	var c refusedCounts
	msgs := p.botMessages(root)
	c.want = len(replies)
	for _, want := range replies {
		n := 0
		for _, m := range msgs {
			if !m.Streaming && slackShown(m) == want {
				n++
			}
		}
		switch {
		case n == 0:
			c.lost++
		case n > 1:
			c.doubled++
		}
		if n > 0 {
			c.shown++
		}
	}
	for _, m := range msgs {
		if m.Streaming {
			c.open++
		}
		// A message showing only the start of a reply is cut.
		s := slackShown(m)
		for _, want := range replies {
			if strings.TrimSpace(s) != "" && len(s) < len(want) && strings.HasPrefix(want, s) {
				c.cut++
				break
			}
		}
		if strings.Contains(slackShown(m), "could not be posted") {
			c.notices++
		}
	}
	if c.notices > 1 {
		c.doubled++
	}
	if c.lost+c.doubled+c.open+c.cut > 0 || c.notices != 1 {
		h.t.Errorf("run %d (%s): %+v; messages:\n%s", run, root, c, p.describe(root))
	}
	return c
}

// replyIn sends alice's signed app_mention at ts in the thread root.
func (h *harness) replyIn(ch, eventID, root, ts, text string) {
	h.t.Helper()
	h.postEvent(map[string]any{
		"type": "app_mention", "user": alice, "text": "<@" + botUser + "> " + text,
		"ts": ts, "thread_ts": root, "channel": ch, "team": team, "event_ts": ts,
	}, eventID)
}

// shows reports whether a finished bot message in thread reads text.
func (p *slack) shows(thread, text string) bool {
	for _, m := range p.botMessages(thread) {
		if !m.Streaming && slackShown(m) == text {
			return true
		}
	}
	return false
}

// postEvent sends ev as a signed event callback and wants it acknowledged.
func (h *harness) postEvent(ev map[string]any, eventID string) {
	h.t.Helper()
	body := slacktest.MustJSON(slacktest.EventCallback(team, eventID, ev))
	req := slacktest.NewSignedRequest("http://"+h.addr+"/slack/events", "application/json", secret, time.Now(), body)
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatalf("posting a slack event: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("POST /slack/events answered %d, want 200", resp.StatusCode)
	}
}
