package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// recordingFinisher is an adapter's finisher: Prepare turns the deferred
// file names into files (as Slack's download does), Submitted records what
// core did.
type recordingFinisher struct {
	mu        sync.Mutex
	prepared  int
	submitted []core.SubmitResult
}

func (f *recordingFinisher) Prepare(_ context.Context, in *core.Inbound) error {
	var names []string
	if err := json.Unmarshal(in.Deferred, &names); err != nil {
		return err
	}
	f.mu.Lock()
	f.prepared++
	f.mu.Unlock()
	for _, n := range names {
		in.Files = append(in.Files, core.UserFile{Name: n, MimeType: "text/plain", Data: []byte("contents of " + n)})
	}
	return nil
}

func (f *recordingFinisher) Submitted(_ context.Context, _ *core.Inbound, res *core.SubmitResult) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitted = append(f.submitted, *res)
}

func (f *recordingFinisher) results() []core.SubmitResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]core.SubmitResult(nil), f.submitted...)
}

// Accept stores only the event (one work item, unique by event id) and
// returns; the item binds the conversation, reads the deferred files, stores
// the entry and queues the turn. A redelivery is Duplicate; a retried item
// stores nothing twice; an event accepted by a process that stops before
// running it is run by the next one.
func TestAcceptStoresTheEventAndFinishesItAfterTheAck(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		s := &setup{st: st, clock: newClock(), tools: &testTools{}}
		script := "fallback:\n  text: \"echo: {{last_user}}\"\n"

		// The first process takes the event and stops before running it.
		f1 := &recordingFinisher{}
		s.finisher = f1
		first := s.start(t, script)
		first.stop()
		in := slackMessage("EvAccept1", "U1", "read this file")
		in.Deferred = core.DeferredJSON([]string{"notes.txt"})
		res, err := first.svc.Accept(ctx, in)
		if err != nil || !res.Accepted || res.Duplicate {
			t.Fatalf("Accept = %+v, %v; want Accepted", res, err)
		}
		place := store.PlaceFromColumns(in.Platform, in.Workspace, in.Channel, in.Thread)
		if _, err := st.BindingFind(ctx, &store.BindingFindParams{Place: place}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("binding after Accept: %v; want none yet (the ack writes the event only)", err)
		}
		again, err := first.svc.Accept(ctx, slackMessage("EvAccept1", "U1", "read this file"))
		if err != nil || !again.Duplicate {
			t.Fatalf("redelivered Accept = %+v, %v; want Duplicate", again, err)
		}
		if f1.prepared != 0 {
			t.Fatal("the files were read on the ack")
		}
		// Chatter in a thread the bot is not in stores nothing, not even
		// the event.
		chatter := slackMessage("EvChatter", "U2", "lunch?")
		chatter.Mentioned, chatter.Thread = false, "1700000099.000100"
		if res, err := first.svc.Accept(ctx, chatter); err != nil || !res.Ignored {
			t.Fatalf("Accept of chatter = %+v, %v; want Ignored", res, err)
		}
		items, err := st.WorkList(ctx, &store.WorkListParams{Kind: core.WorkInbound, Limit: 10})
		if err != nil || len(items) != 1 {
			t.Fatalf("inbound items = %d, %v; want the accepted event's one", len(items), err)
		}

		// The next process runs it.
		f2 := &recordingFinisher{}
		s.finisher, s.workerID = f2, "second"
		second := s.start(t, script)
		var b *store.Binding
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, err = st.BindingFind(ctx, &store.BindingFindParams{Place: place})
			if err == nil && len(f2.results()) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the accepted event was not finished: binding %v, submitted %v", err, f2.results())
			}
			time.Sleep(20 * time.Millisecond)
		}
		waitStatus(t, st, b.ConversationID, store.ConversationIdle)
		if r := f2.results()[0]; r.ConversationID != b.ConversationID || r.Duplicate || r.Accepted {
			t.Fatalf("Submitted got %+v; want the conversation %s", r, b.ConversationID)
		}
		es := entries(t, st, b.ConversationID, false)
		var users int
		for _, e := range es {
			if e.Kind != store.EntryUser {
				continue
			}
			users++
			uc, err := core.Decode[core.UserContent](e)
			if err != nil {
				t.Fatal(err)
			}
			if len(uc.Files) != 1 || string(uc.Files[0].Data) != "contents of notes.txt" {
				t.Fatalf("user entry files = %+v; want the file read after the ack, kept in the log", uc.Files)
			}
			if strings.Contains(string(e.Content), "Deferred") {
				t.Fatalf("user entry %s keeps the adapter's deferred part", e.Content)
			}
		}
		if users != 1 || !strings.Contains(textOf(t, es[len(es)-1]), "read this file") {
			t.Fatalf("log = %d user entries, last %q; want the message once, answered", users, textOf(t, es[len(es)-1]))
		}

		// A retry of the item (a crash after Submit's commit) stores nothing.
		if err := second.svc.RunInbound(ctx, &store.WorkItem{}, core.InboundArgs{Inbound: *in}); err != nil {
			t.Fatal(err)
		}
		if r := f2.results(); !r[len(r)-1].Duplicate {
			t.Fatalf("retried item's result = %+v; want Duplicate", r[len(r)-1])
		}
		if n := len(entries(t, st, b.ConversationID, false)); n != len(es) {
			t.Fatalf("log has %d entries after a retried item; want %d", n, len(es))
		}
	})
}

// Without a finisher for the platform, Accept is Submit.
func TestAcceptWithoutFinisherSubmits(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := &setup{st: st, clock: newClock(), tools: &testTools{}}
	in := s.start(t, "fallback:\n  text: \"ok\"\n")
	res, err := in.svc.Accept(context.Background(), slackMessage("EvPlain", "U1", "hello"))
	if err != nil || res.Accepted || res.ConversationID.String() == "00000000-0000-0000-0000-000000000000" {
		t.Fatalf("Accept = %+v, %v; want Submit's result", res, err)
	}
	waitStatus(t, st, res.ConversationID, store.ConversationIdle)
}
