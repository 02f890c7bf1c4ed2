package app_test

// End-to-end tests of the rest of issue 17 on Slack, through the real
// service: files shared with the bot reaching the model, replies as
// markdown blocks, the done reaction, edits forking the conversation and
// deletes marked in the log.

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// pngBytes is a 1×1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// fileShare is a DM sharing files, as Slack sends it (subtype file_share).
func fileShare(channel, ts, user, text string, files ...map[string]any) map[string]any {
	ev := directMessage(channel, ts, user, text)
	ev["subtype"] = "file_share"
	ev["files"] = files
	return ev
}

// TestSlackImageReachesTheModel: a person shares an image and an archive
// in a DM. The image is downloaded with the bot token and reaches the
// (fake) Anthropic API as an image block; the archive is named in the
// text the model sees; the log keeps the image, so the next turn (a new
// model call built from the log alone) sends it again. The reply is a
// markdown block, and the 👀 on each message becomes ✅ once answered.
func TestSlackImageReachesTheModel(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		fake.Push(modeltest.Reply{Text: "A **red** pixel."}, modeltest.Reply{Text: "Still a pixel."})
		env := anthropicEnv(fake)
		e := startSlack(t, db(t), envOptions{env: env, config: openAccess + "slack:\n  ack: deferred\n  ack_reaction: eyes\n"})
		const dm, ts = "D0FILES", "1700000600.000100"
		img := e.slack.ShareFile("pixel.png", "image/png", pngBytes)
		zip := e.slack.ShareFile("logs.zip", "application/zip", []byte("PK\x03\x04"))
		e.mustPost(newEvent("EvFile1", fileShare(dm, ts, alice, "what is in this picture?", img, zip)))
		// The ack stored the event with the files to read, not their bytes:
		// they are downloaded after it, by the event's work item.
		items, err := e.store.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkInbound, Limit: 10})
		if err != nil || len(items) != 1 || !strings.Contains(string(items[0].Payload), "pixel.png") ||
			strings.Contains(string(items[0].Payload), base64.StdEncoding.EncodeToString(pngBytes)) {
			t.Fatalf("inbound items at the ack %d (%v); want one naming the files, without their bytes", len(items), err)
		}
		reply := e.waitReply(dm, "red")
		e.waitIdle()

		downloads := e.slack.Downloads()
		if len(downloads) != 1 || downloads[0].Token != e2eBotToken || downloads[0].Status != 200 {
			t.Fatalf("downloads %+v, want the image alone, fetched with the bot token", downloads)
		}
		reqs := fake.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d model requests, want 1", len(reqs))
		}
		image, text := lastUserMedia(t, reqs[0])
		if image == nil || image["media_type"] != "image/png" || image["data"] != base64.StdEncoding.EncodeToString(pngBytes) {
			t.Fatalf("last user message's image block source %v, want the PNG as base64", image)
		}
		if !strings.Contains(text, "what is in this picture?") || !strings.Contains(text, "logs.zip") {
			t.Fatalf("the model's text %q, want the question and logs.zip named as unreadable", text)
		}
		if !bytes.Contains(reply.Blocks, []byte(`"type":"markdown"`)) || !bytes.Contains(reply.Blocks, []byte("A **red** pixel.")) {
			t.Fatalf("reply blocks %s, want the Markdown as written in a markdown block", reply.Blocks)
		}
		conv := e.conversation(dm, "")
		users := e.entries(conv.ID, store.EntryUser)
		if c := decode[core.UserContent](t, users[0]); len(c.Files) != 2 || !bytes.Equal(c.Files[0].Data, pngBytes) || c.Files[1].Note == "" {
			t.Fatalf("logged files %+v, want the image's bytes and the archive with a note", c.Files)
		}

		// The next turn rebuilds the prompt from the log: the image is there.
		e.mustPost(newEvent("EvFile2", directMessage(dm, "1700000601.000100", alice, "and now?")))
		e.waitReply(dm, "Still a pixel.")
		e.waitIdle()
		if reqs = fake.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), base64.StdEncoding.EncodeToString(pngBytes)) {
			t.Fatalf("%d requests; want a second one that still carries the image", len(reqs))
		}
		poll(t, "✅ in place of 👀 on both messages", func() (bool, string) {
			r := e.slack.Reactions()
			done := 0
			for _, x := range r {
				if x.Name == "eyes" {
					return false, fmt.Sprint(r)
				}
				if x.Name == "white_check_mark" {
					done++
				}
			}
			return done == 2, fmt.Sprint(r)
		})
	})
}

// lastUserMedia returns the image source and the joined text of the last
// user message of a model request.
func lastUserMedia(t *testing.T, r modeltest.Request) (map[string]any, string) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	var image map[string]any
	var text []string
	for _, b := range last.Content {
		switch b["type"] {
		case "image":
			image, _ = b["source"].(map[string]any)
		case "text":
			s, _ := b["text"].(string)
			text = append(text, s)
		}
	}
	return image, strings.Join(text, "\n")
}

// TestSlackEditForksAndDeleteMarks: alice edits the message the agent
// answered. The conversation forks at that message with the new text, the
// DM now shows the fork, and the agent answers the new text there; the old
// branch keeps the old exchange; the fork is titled by the new text, the
// old branch keeps its title. An edit that changes nothing (Slack sends
// one for a link preview) does nothing. A deleted message is marked in the
// log, never removed, and the model is told.
func TestSlackEditForksAndDeleteMarks(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		const dm, ts = "D0EDIT", "1700000700.000100"
		e.mustPost(newEvent("EvEd1", directMessage(dm, ts, alice, "what is two plus two")))
		e.waitReply(dm, fallbackReply("what is two plus two"))
		e.waitIdle()
		before := e.conversation(dm, "")

		edit := func(text string) map[string]any {
			return map[string]any{"type": "message", "subtype": "message_changed", "channel": dm, "channel_type": "im", "hidden": true,
				"ts": "1700000701.000100", "event_ts": "1700000701.000100",
				"message":          map[string]any{"type": "message", "user": alice, "text": text, "ts": ts, "edited": map[string]any{"user": alice, "ts": "1700000701.000000"}},
				"previous_message": map[string]any{"type": "message", "user": alice, "text": "what is two plus two", "ts": ts}}
		}
		e.mustPost(newEvent("EvEd2", edit("what is two plus two")))
		e.waitIdle()
		if c := e.conversation(dm, ""); c.ID != before.ID {
			t.Fatalf("an edit that changed nothing moved the DM to %s", c.ID)
		}

		e.mustPost(newEvent("EvEd3", edit("what is three plus three")))
		e.waitReply(dm, fallbackReply("what is three plus three"))
		e.waitIdle()
		fork := e.conversation(dm, "")
		if fork.ID == before.ID || fork.ParentID == nil || *fork.ParentID != before.ID || fork.ForkSeq == nil || *fork.ForkSeq != 1 {
			t.Fatalf("the DM's conversation after the edit %+v, want a fork of %s at seq 1", fork, before.ID)
		}
		// The fork is titled by the edited first message; the old branch keeps its title.
		if fork.Title != "what is three plus three" || !fork.TitleAuto {
			t.Fatalf("the fork's title %q (automatic %v), want the edited text", fork.Title, fork.TitleAuto)
		}
		if old, err := e.store.ConversationGet(context.Background(), before.ID); err != nil || old.Title != "what is two plus two" {
			t.Fatalf("the parent's title after the edit: %+v, %v; want the first text", old, err)
		}
		e.checkOneReply(fork.ID, "what is three plus three", fallbackReply("what is three plus three"))
		e.checkOneReply(before.ID, "what is two plus two", fallbackReply("what is two plus two"))
		if n := len(e.botMessages(dm)); n != 2 {
			t.Fatalf("%d bot messages in the DM, want the first answer and the answer to the edit", n)
		}

		// A follow-up goes to the fork; deleting it marks it.
		const ts2 = "1700000702.000100"
		e.mustPost(newEvent("EvEd4", directMessage(dm, ts2, alice, "thanks")))
		e.waitReply(dm, fallbackReply("thanks"))
		e.waitIdle()
		e.mustPost(newEvent("EvEd5", map[string]any{"type": "message", "subtype": "message_deleted", "channel": dm, "channel_type": "im", "hidden": true,
			"ts": "1700000703.000100", "deleted_ts": ts2, "event_ts": "1700000703.000100",
			"previous_message": map[string]any{"type": "message", "user": alice, "text": "thanks", "ts": ts2}}))
		var marks []*store.Entry
		poll(t, "the deletion marked", func() (bool, string) {
			marks = e.entries(fork.ID, store.EntryDeleted)
			return len(marks) == 1, fmt.Sprint(len(marks))
		})
		c := decode[core.DeletedContent](t, marks[0])
		users := e.entries(fork.ID, store.EntryUser)
		if c.MessageID != ts2 || c.UserID != alice || len(users) != 2 || c.EntryID != users[1].ID {
			t.Fatalf("deleted mark %+v and %d user entries; want the mark on alice's second message, which stays", c, len(users))
		}
	})
}

// TestSlackReplyUnderRoutinePost: a routine posts in a channel; alice
// answers in the thread under that post without mentioning the bot, and
// the agent answers her there, in the run's conversation.
func TestSlackReplyUnderRoutinePost(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		ctx := context.Background()
		e := startSlack(t, db(t), envOptions{})
		const ch = "C0ROUTINE"
		e.mustPost(newEvent("EvRt1", mention(ch, "1700000800.000100", "", alice, "!routine add digest every 1h -- post the digest")))
		e.waitReply(ch, "digest")
		e.waitIdle()
		routines, err := e.app.Scheduler.List(ctx, e.app.Service.Agents().Default().Name, store.ScheduleRoutine)
		if err != nil || len(routines) != 1 {
			t.Fatalf("routines after !routine add: %+v, %v; want one", routines, err)
		}
		now := time.Now()
		if _, err := e.store.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: routines[0].ID, NextRunAt: &now}); err != nil {
			t.Fatal(err)
		}
		before := len(e.botMessages(ch))
		// The scheduler's own loop may fire it first; either way it fires once.
		if _, err := e.app.Scheduler.Tick(ctx); err != nil {
			t.Fatalf("firing the routine: %v", err)
		}
		var post slacktest.Message
		poll(t, "the routine's post", func() (bool, string) {
			msgs := e.botMessages(ch)
			if len(msgs) <= before || msgs[len(msgs)-1].Streaming {
				return false, fmt.Sprintf("%+v", msgs)
			}
			post = msgs[len(msgs)-1]
			return post.ThreadTS == "", fmt.Sprintf("%+v", post)
		})
		e.waitIdle()
		runConv := e.conversation(ch, post.TS) // the run is bound to the thread under its post

		const reply = "and what about yesterday"
		e.mustPost(newEvent("EvRt2", map[string]any{"type": "message", "channel_type": "channel", "user": alice, "text": reply,
			"ts": "1700000801.000100", "thread_ts": post.TS, "channel": ch, "team": e2eTeam, "event_ts": "1700000801.000100"}))
		answer := e.waitReply(ch, fallbackReply(reply))
		e.waitIdle()
		if answer.ThreadTS != post.TS {
			t.Fatalf("the answer is in thread %q, want under the routine's post %s", answer.ThreadTS, post.TS)
		}
		users := e.entries(runConv.ID, store.EntryUser)
		if c := decode[core.UserContent](t, users[len(users)-1]); c.Text != reply {
			t.Fatalf("the run's last user entry says %q, want alice's reply", c.Text)
		}
	})
}

// TestSlackBriefingAlwaysPostsACard: a briefing routine posts only its
// card, at top level in its channel, whether its model answers in prose
// (the scripted model's fallback never calls post_result: the briefing
// template is filled from the reply) or with post_result and a line of
// prose besides. The prose stays in the run's log; nothing else of the run
// is posted, in the channel or in the thread under the card, until a person
// replies under the card: the agent answers there.
func TestSlackBriefingAlwaysPostsACard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, instruction, cardText, note, prose string
	}{
		{"prose", "brief me", "Hello from the scripted model", "filled from its reply", "Hello from the scripted model"},
		{"card tool", "brief with the card tool", "None open.", "posted its card", "Here is your briefing."},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, db databaseFunc) {
				ctx := context.Background()
				e := startSlack(t, db(t), envOptions{})
				ch := fmt.Sprintf("C0BRIEF%d", i)
				e.mustPost(newEvent("EvBr1", mention(ch, "1700000900.000100", "", alice, "!routine add morning every 1h template briefing -- "+tc.instruction)))
				e.waitReply(ch, "morning")
				e.waitIdle()
				routines, err := e.app.Scheduler.List(ctx, e.app.Service.Agents().Default().Name, store.ScheduleRoutine)
				if err != nil || len(routines) != 1 {
					t.Fatalf("routines after !routine add: %+v, %v; want one", routines, err)
				}
				before := len(e.botMessages(ch))
				now := time.Now()
				if _, err := e.store.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: routines[0].ID, NextRunAt: &now}); err != nil {
					t.Fatal(err)
				}
				// The scheduler's own loop may fire it first; either way it fires once.
				if _, err := e.app.Scheduler.Tick(ctx); err != nil {
					t.Fatalf("firing the briefing: %v", err)
				}
				var runs []*store.ScheduleRun
				poll(t, "the briefing run to finish", func() (bool, string) {
					runs, err = e.store.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: routines[0].ID, Limit: 5})
					return err == nil && len(runs) == 1 && runs[0].Status != store.RunStarted, fmt.Sprintf("%+v %v", runs, err)
				})
				poll(t, "the briefing card", func() (bool, string) {
					for _, m := range e.botMessages(ch)[before:] {
						if strings.Contains(blockText(t, m.Blocks), "📋") {
							return true, ""
						}
					}
					return false, fmt.Sprintf("%+v", e.botMessages(ch)[before:])
				})
				e.waitIdle()
				if runs[0].Status != store.RunFinished || !strings.Contains(runs[0].Note, tc.note) {
					t.Fatalf("run %+v; want finished, noting %q", runs[0], tc.note)
				}
				posted := e.botMessages(ch)[before:]
				if len(posted) != 1 {
					t.Fatalf("the briefing posted %d messages, want only its card: %+v", len(posted), posted)
				}
				card := posted[0]
				if text := blockText(t, card.Blocks); !strings.Contains(text, "📋") || !strings.Contains(text, tc.cardText) {
					t.Fatalf("card text %q, want the briefing card showing %q", text, tc.cardText)
				}
				if card.ThreadTS != "" || card.Streaming {
					t.Fatalf("the card is in thread %q (streaming %v), want it at top level, finished", card.ThreadTS, card.Streaming)
				}
				if cards := e.entries(*runs[0].ConversationID, store.EntryCard); len(cards) != 1 {
					t.Fatalf("%d card entries in the run, want 1", len(cards))
				}
				found := false
				for _, en := range e.entries(*runs[0].ConversationID, store.EntryAssistant) {
					found = found || strings.Contains(decode[core.AssistantContent](t, en).Text, tc.prose)
				}
				if !found {
					t.Fatalf("the run's log lost the model's prose %q", tc.prose)
				}
				// Once a person writes under the card, the agent talks there.
				const reply = "anything else today"
				e.mustPost(newEvent("EvBr2", map[string]any{"type": "message", "channel_type": "channel", "user": alice, "text": reply,
					"ts": "1700000901.000100", "thread_ts": card.TS, "channel": ch, "team": e2eTeam, "event_ts": "1700000901.000100"}))
				if answer := e.waitReply(ch, fallbackReply(reply)); answer.ThreadTS != card.TS {
					t.Fatalf("the answer to a reply under the card is in thread %q, want %s", answer.ThreadTS, card.TS)
				}
			})
		})
	}
}
