package deliver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/deliver"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// recorder is a platform that remembers what it was asked to post. With
// lost set, a post reaches the platform but its answer is lost, as when the
// process dies between the call and recording the message id.
type recorder struct {
	mu    sync.Mutex
	posts []posted
	lost  bool
}

type posted struct {
	to  bots.Target
	msg *bots.Message
	ref bots.MessageRef
}

func (r *recorder) Name() string                    { return "chat" }
func (r *recorder) Start(ctx context.Context) error { return nil }
func (r *recorder) Stop()                           {}
func (r *recorder) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := bots.MessageRef{Channel: to.Channel, ID: uuid.NewString()}
	r.posts = append(r.posts, posted{to, m, ref})
	if r.lost {
		return nil, errors.New("connection reset (the post went through)")
	}
	return []bots.MessageRef{ref}, nil
}

func (r *recorder) all() []posted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]posted(nil), r.posts...)
}

// finder is a recorder that can look its posts up by key, as Slack does
// through message metadata.
type finder struct{ recorder }

func (f *finder) FindPosted(ctx context.Context, to bots.Target, key string, since time.Time) ([]bots.MessageRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var refs []bots.MessageRef
	for _, p := range f.posts {
		if p.msg.Key == key {
			refs = append(refs, p.ref)
		}
	}
	return refs, nil
}

func appendEntry(t *testing.T, st store.Store, conv uuid.UUID, kind store.EntryKind, content any) *store.Entry {
	t.Helper()
	b, _ := json.Marshal(content)
	res, err := st.EntryAppend(context.Background(), &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: "x", Content: b, Now: time.Now()})
	require.NoError(t, err)
	return res.Entry
}

func bind(t *testing.T, st store.Store, channel, thread string) *store.Binding {
	t.Helper()
	ens, err := st.BindingEnsure(context.Background(), &store.BindingEnsureParams{
		Place:        store.PlaceFromColumns("chat", "W", channel, thread),
		Conversation: store.ConversationCreateParams{Now: time.Now()}, Now: time.Now(),
	})
	require.NoError(t, err)
	return ens.Binding
}

func TestFlushDeliversEachEntryOnce(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	rec := &recorder{}
	d, err := deliver.New(deliver.Options{
		Store: st, Adapters: []bots.Adapter{rec},
		IdentityFunc: func(agent string) *bots.Identity {
			return &bots.Identity{Name: "The " + agent, IconURL: "https://x/i.png"}
		},
	})
	require.NoError(t, err)
	conv := bind(t, st, "user:U1", "run:abc").ConversationID
	appendEntry(t, st, conv, store.EntryUser, core.UserContent{Text: "hi"})
	reply := appendEntry(t, st, conv, store.EntryAssistant, core.AssistantContent{Text: "hello", Agent: "atlas"})
	stamped, err := cards.Stamp(&cards.Result{Kind: "news", Title: "Today", Items: []cards.Item{{Title: "A headline"}}}, nil)
	require.NoError(t, err)
	raw, _ := json.Marshal(stamped)
	card := appendEntry(t, st, conv, store.EntryCard, core.CardContent{Card: raw})
	appendEntry(t, st, conv, store.EntryError, core.ErrorContent{Message: "retrying", Interim: true})
	appendEntry(t, st, conv, store.EntryError, core.ErrorContent{Message: "model is down", Retryable: true})

	for range 2 { // a second flush posts nothing again
		require.NoError(t, d.Flush(ctx, conv))
	}
	got := rec.all()
	require.Len(t, got, 3, "reply, card, final error; not the user's own message nor the interim notice")
	require.Equal(t, bots.Target{Platform: "chat", Workspace: "W", UserID: "U1"}, got[0].to, "a DM to U1 with no thread (user:U1, run:abc are store conventions)")
	require.Equal(t, "hello", got[0].msg.Text)
	require.Equal(t, "The atlas", got[0].msg.Identity.Name, "the reply posts with the agent's identity")
	require.Equal(t, reply.ID.String(), got[0].msg.Key, "each post carries its entry id as the idempotency key")
	require.NotNil(t, got[1].msg.Card)
	require.Equal(t, card.ID, got[1].msg.Card.EntryID)
	require.Contains(t, got[1].msg.Text, "A headline", "a card has a plain fallback")
	require.Contains(t, got[2].msg.Text, "model is down")
	b, _ := st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("chat", "W", "user:U1", "run:abc")})
	require.EqualValues(t, 3, b.DeliveredSeq)
}

// A post whose answer was lost leaves a pending intent. The next delivery
// finds the message by its key instead of posting it again.
func TestLostAnswerIsFoundNotReposted(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	f := &finder{recorder{lost: true}}
	d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{f}})
	require.NoError(t, err)
	b := bind(t, st, "C1", "1.1")
	e := appendEntry(t, st, b.ConversationID, store.EntryAssistant, core.AssistantContent{Text: "once"})

	require.Error(t, d.Flush(ctx, b.ConversationID), "the first delivery fails: its answer was lost")
	p, err := st.PostedGet(ctx, &store.PostedGetParams{BindingID: b.ID, EntryID: e.ID})
	require.NoError(t, err, "the intent was recorded before the platform was called")
	require.True(t, p.Pending)

	f.mu.Lock()
	f.lost = false
	f.mu.Unlock()
	require.NoError(t, d.Flush(ctx, b.ConversationID))
	require.Len(t, f.all(), 1, "the lost post was found by its key, not posted again")
	p, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: b.ID, EntryID: e.ID})
	require.NoError(t, err)
	require.False(t, p.Pending)
	require.Equal(t, []string{"C1/" + f.all()[0].ref.ID}, p.MessageIDs)
}

// Without a Finder, a pending intent is posted again with the same key, for
// the platform to dedupe (Discord's enforced nonce).
func TestPendingIntentRepostsWithTheSameKey(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	rec := &recorder{lost: true}
	d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{rec}})
	require.NoError(t, err)
	b := bind(t, st, "C1", "")
	appendEntry(t, st, b.ConversationID, store.EntryAssistant, core.AssistantContent{Text: "once"})
	require.Error(t, d.Flush(ctx, b.ConversationID))
	rec.mu.Lock()
	rec.lost = false
	rec.mu.Unlock()
	require.NoError(t, d.Flush(ctx, b.ConversationID))
	got := rec.all()
	require.Len(t, got, 2)
	require.Equal(t, got[0].msg.Key, got[1].msg.Key, "a repost carries the same idempotency key")
}

func TestPromptMessageButtonsFitPlatforms(t *testing.T) {
	t.Parallel()
	req, _ := json.Marshal(map[string]any{"prompt": "Which?", "choices": []string{"Blue", "Green"}})
	ap := &store.Approval{ID: uuid.New(), Kind: store.ApprovalQuestion, Request: req}
	m, err := deliver.PromptMessage(ap)
	require.NoError(t, err)
	require.Len(t, m.Buttons, 2)
	require.Equal(t, "1", m.Buttons[1].Value, "buttons are valued by index")
	require.Equal(t, "Green", m.Buttons[1].Label)
	for _, b := range m.Buttons {
		// Discord's custom_id holds the action id and the value: 100 characters.
		require.LessOrEqual(t, len(b.ActionID)+len(b.Value)+4, 100, "button %+v", b)
	}
	confirm, _ := json.Marshal(map[string]any{"tool": "delete", "input": map[string]string{"x": "y"}})
	m, err = deliver.PromptMessage(&store.Approval{ID: uuid.New(), Kind: store.ApprovalConfirm, Request: confirm})
	require.NoError(t, err)
	var labels, values []string
	for _, b := range m.Buttons {
		labels, values = append(labels, b.Label), append(values, b.Value)
		require.LessOrEqual(t, len(b.ActionID)+len(b.Value)+4, 100, "button %+v", b)
	}
	require.Equal(t, []string{"Allow once", "Always allow", "Always allow these arguments", "Deny"}, labels)
	require.Equal(t, []string{"approve", "always", "always_args", "deny"}, values)
	require.True(t, strings.Contains(m.Text, "delete"))
}

// refuser is a platform that refuses every file for good, and fails the
// next failNotices notices for a while (a transient error).
type refuser struct {
	recorder
	failNotices int
	fileTries   int
}

func (r *refuser) Post(ctx context.Context, to bots.Target, m *bots.Message) ([]bots.MessageRef, error) {
	r.mu.Lock()
	if len(m.Files) > 0 {
		r.fileTries++
		r.mu.Unlock()
		return nil, bots.Refused("the app lacks the files:write scope", errors.New("missing_scope"))
	}
	if r.failNotices > 0 && strings.Contains(m.Text, "could not be posted") {
		r.failNotices--
		r.mu.Unlock()
		return nil, errors.New("connection reset before the post")
	}
	r.mu.Unlock()
	return r.recorder.Post(ctx, to, m)
}

// An entry the platform refuses for good is passed: it is recorded as
// undeliverable with the reason, one notice stands in its place, and the
// entries after it go out. When the notice itself fails for a while, a
// later delivery (another instance: a new Deliverer on the same store)
// posts only the notice, never the refused entry again.
func TestRefusedEntryIsPassedWithOneNotice(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	r := &refuser{failNotices: 1}
	newDeliverer := func() *deliver.Deliverer {
		d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{r}})
		require.NoError(t, err)
		return d
	}
	b := bind(t, st, "C1", "1.1")
	appendEntry(t, st, b.ConversationID, store.EntryAssistant, core.AssistantContent{Text: "before"})
	file := appendEntry(t, st, b.ConversationID, store.EntryToolResult, core.ToolResultContent{
		Attachments: []core.Attachment{{Name: "chart.png", MimeType: "image/png", Data: []byte("png")}},
	})
	appendEntry(t, st, b.ConversationID, store.EntryAssistant, core.AssistantContent{Text: "after"})

	require.Error(t, newDeliverer().Flush(ctx, b.ConversationID), "the notice fails for now: the item retries")
	p, err := st.PostedGet(ctx, &store.PostedGetParams{BindingID: b.ID, EntryID: file.ID})
	require.NoError(t, err, "the refusal is recorded before the notice is posted")
	require.True(t, p.Pending, "the notice is still to post")
	require.Equal(t, "the app lacks the files:write scope", p.Undeliverable)

	for range 2 { // another instance, then a redelivery: nothing more
		require.NoError(t, newDeliverer().Flush(ctx, b.ConversationID))
	}
	var texts []string
	for _, g := range r.all() {
		texts = append(texts, g.msg.Text)
	}
	require.Equal(t, []string{"before", "⚠️ A file could not be posted here: the app lacks the files:write scope.", "after"}, texts)
	require.Equal(t, 1, r.fileTries, "a refused file is never tried again")
	p, err = st.PostedGet(ctx, &store.PostedGetParams{BindingID: b.ID, EntryID: file.ID})
	require.NoError(t, err)
	require.False(t, p.Pending)
	require.Equal(t, []string{"C1/" + r.all()[1].ref.ID}, p.MessageIDs, "the record names the notice")
	got, err := st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("chat", "W", "C1", "1.1")})
	require.NoError(t, err)
	require.EqualValues(t, 3, got.DeliveredSeq, "the cursor passed the refused entry")
}

// resumer is a recorder that can take over live streams: a resumed
// stream's Finish is recorded as an edit of the messages it took over.
type resumer struct {
	recorder
	finished map[string]string // message id → final text
}

type resumed struct {
	r    *resumer
	refs []bots.MessageRef
}

func (r *resumer) ResumeStream(ctx context.Context, to bots.Target, refs []bots.MessageRef, id *bots.Identity) (bots.Stream, error) {
	return &resumed{r: r, refs: refs}, nil
}

func (s *resumed) Append(context.Context, string) error { return nil }
func (s *resumed) Reset(context.Context) error          { return nil }
func (s *resumed) Refs() []bots.MessageRef              { return s.refs }
func (s *resumed) Finish(ctx context.Context, final *bots.Message) ([]bots.MessageRef, error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	for _, ref := range s.refs {
		s.r.finished[ref.ID] = final.Text
	}
	return s.refs, nil
}

// A reply of one turn never finishes the live message another turn left
// open: that message holds the other turn's reply. The reply is posted on
// its own, and the other turn's message, whose text never became an entry,
// is closed with the interruption notice.
func TestEntryNeverFinishesAnotherTurnsLiveMessage(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	r := &resumer{finished: map[string]string{}}
	d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{r}})
	require.NoError(t, err)
	b := bind(t, st, "C1", "1.1")
	earlier, later := uuid.New(), uuid.New()
	require.NoError(t, st.LiveStreamSave(ctx, &store.LiveStream{BindingID: b.ID, TurnID: &earlier, MessageIDs: []string{"C1/streamed-by-earlier"}, UpdatedAt: time.Now()}))
	content, _ := json.Marshal(core.AssistantContent{Text: "the later turn's reply"})
	_, err = st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: b.ConversationID, Kind: store.EntryAssistant, Author: "agent:x", Content: content, TurnID: &later, Now: time.Now()})
	require.NoError(t, err)

	require.NoError(t, d.Flush(ctx, b.ConversationID))
	got := r.all()
	require.Len(t, got, 1, "the later reply is posted as a message of its own")
	require.Equal(t, "the later turn's reply", got[0].msg.Text)
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Equal(t, map[string]string{"streamed-by-earlier": "⚠️ This reply was interrupted."}, r.finished,
		"the earlier turn's message is closed as cut, never overwritten by the later reply")
}
