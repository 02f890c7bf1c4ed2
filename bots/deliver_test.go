package bots_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// recorder is a platform that remembers what it was asked to post.
type recorder struct {
	mu    sync.Mutex
	posts []posted
}

type posted struct {
	to  bots.Target
	msg *bots.Message
}

func (r *recorder) Name() string                    { return "chat" }
func (r *recorder) Start(ctx context.Context) error { return nil }
func (r *recorder) Stop()                           {}
func (r *recorder) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posts = append(r.posts, posted{to, m})
	return []bots.MessageRef{{Channel: to.Channel, ID: uuid.NewString()}}, nil
}

func (r *recorder) all() []posted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]posted(nil), r.posts...)
}

func appendEntry(t *testing.T, st store.Store, conv uuid.UUID, kind store.EntryKind, content any) *store.Entry {
	t.Helper()
	b, _ := json.Marshal(content)
	res, err := st.EntryAppend(context.Background(), &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: "x", Content: b, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return res.Entry
}

func TestFlushDeliversEachEntryOnce(t *testing.T) {
	st := testenv.SQLite(t)
	ctx := context.Background()
	rec := &recorder{}
	r, err := bots.NewRouter(bots.RouterOptions{
		Store: st, Hub: core.NewHub(), Adapters: []bots.Adapter{rec},
		IdentityFunc: func(agent string) *bots.Identity {
			return &bots.Identity{Name: "The " + agent, IconURL: "https://x/i.png"}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ens, err := st.BindingEnsure(ctx, &store.BindingEnsureParams{
		Platform: "chat", Workspace: "W", Channel: "user:U1", Thread: "run:abc",
		Conversation: store.ConversationCreateParams{Now: time.Now()}, Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := ens.Binding.ConversationID
	appendEntry(t, st, conv, store.EntryUser, core.UserContent{Text: "hi"})
	appendEntry(t, st, conv, store.EntryAssistant, core.AssistantContent{Text: "hello", Agent: "atlas"})
	stamped, err := cards.Stamp(&cards.Result{Kind: "news", Title: "Today", Items: []cards.Item{{Title: "A headline"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(stamped)
	card := appendEntry(t, st, conv, store.EntryCard, core.CardContent{Card: raw})
	appendEntry(t, st, conv, store.EntryError, core.ErrorContent{Message: "retrying", Interim: true})
	appendEntry(t, st, conv, store.EntryError, core.ErrorContent{Message: "model is down", Retryable: true})

	for range 2 { // a second flush posts nothing again
		if err := r.Flush(ctx, conv); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.all()
	if len(got) != 3 {
		t.Fatalf("posted %d messages, want 3 (reply, card, final error; not the user's own message nor the interim notice)", len(got))
	}
	if to := got[0].to; to.Channel != "" || to.UserID != "U1" || to.Thread != "" {
		t.Fatalf("target = %+v; want a DM to U1 with no thread (user:U1, run:abc are store conventions)", to)
	}
	if m := got[0].msg; m.Text != "hello" || m.Identity == nil || m.Identity.Name != "The atlas" {
		t.Fatalf("reply = %+v; want the text with the agent's identity", m)
	}
	if m := got[1].msg; m.Card == nil || m.Card.EntryID != card.ID || !strings.Contains(m.Text, "A headline") {
		t.Fatalf("card message = %+v; want the stamped card with its entry id and a plain fallback", m)
	}
	if m := got[2].msg; !strings.Contains(m.Text, "model is down") {
		t.Fatalf("error message = %q", m.Text)
	}
	b, _ := st.BindingFind(ctx, "chat", "W", "user:U1", "run:abc")
	if b.DeliveredSeq != 3 {
		t.Fatalf("delivered seq = %d, want 3", b.DeliveredSeq)
	}
}

func TestPromptMessageButtonsFitPlatforms(t *testing.T) {
	req, _ := json.Marshal(map[string]any{"prompt": "Which?", "choices": []string{"Blue", "Green"}})
	ap := &store.Approval{ID: uuid.New(), Kind: store.ApprovalQuestion, Request: req}
	m, err := bots.PromptMessage(ap)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Buttons) != 2 || m.Buttons[1].Value != "1" || m.Buttons[1].Label != "Green" {
		t.Fatalf("buttons = %+v; want one per choice, valued by index", m.Buttons)
	}
	for _, b := range m.Buttons {
		// Discord's custom_id holds the action id and the value: 100 characters.
		if n := len(b.ActionID) + len(b.Value) + 4; n > 100 {
			t.Fatalf("button %+v needs %d characters of custom_id", b, n)
		}
	}
	confirm, _ := json.Marshal(map[string]any{"tool": "delete", "input": map[string]string{"x": "y"}})
	m, err = bots.PromptMessage(&store.Approval{ID: uuid.New(), Kind: store.ApprovalConfirm, Request: confirm})
	if err != nil || len(m.Buttons) != 2 || m.Buttons[0].Value != "approve" || !strings.Contains(m.Text, "delete") {
		t.Fatalf("confirm prompt = %+v, %v", m, err)
	}
}

// failing is a platform that is down.
type failing struct{ recorder }

func (f *failing) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	return nil, context.DeadlineExceeded
}

func TestFailedDeliveryAtTurnEndIsQueued(t *testing.T) {
	st := testenv.SQLite(t)
	ctx := context.Background()
	hub := core.NewHub()
	r, err := bots.NewRouter(bots.RouterOptions{Store: st, Hub: hub, Adapters: []bots.Adapter{&failing{}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	ens, err := st.BindingEnsure(ctx, &store.BindingEnsureParams{
		Platform: "chat", Workspace: "W", Channel: "C", Conversation: store.ConversationCreateParams{Now: time.Now()}, Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := ens.Binding.ConversationID
	appendEntry(t, st, conv, store.EntryAssistant, core.AssistantContent{Text: "lost?"})
	hub.Publish(core.Event{ConversationID: conv, Kind: core.EventTurnEnd})
	deadline := time.Now().Add(10 * time.Second)
	for {
		items, err := st.WorkList(ctx, &store.WorkListParams{Kind: bots.WorkDeliver, ConversationID: &conv})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliver items queued; want one durable retry after the failed delivery", len(items))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if b, _ := st.BindingFind(ctx, "chat", "W", "C", ""); b.DeliveredSeq != 0 {
		t.Fatalf("delivered seq = %d after a failed post; want 0", b.DeliveredSeq)
	}
}
