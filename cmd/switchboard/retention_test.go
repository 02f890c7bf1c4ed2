package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// sbAt runs switchboard as a shell would, against db.
func sbAt(db string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{args[0], "-log-level", "error"}, args[1:]...), env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut)
		return out.String(), err
	}
}

// TestWorkspaceRetentionCommand: `workspaces retention` shows, sets and
// takes off a workspace's retention, and refuses bad input naming it.
func TestWorkspaceRetentionCommand(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	sb := sbAt(db)
	must := func(args ...string) string {
		t.Helper()
		out, err := sb(args...)
		if err != nil {
			t.Fatalf("switchboard %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	out := must("workspaces", "create", uuid.NewString(), "Acme")
	ws := regexp.MustCompile(`workspace ([0-9a-f-]{36})`).FindStringSubmatch(out)[1]

	if out := must("workspaces", "retention", ws); !strings.Contains(out, "keeps its conversations forever") {
		t.Fatalf("a new workspace's retention = %q; want forever", out)
	}
	dir := filepath.Join(t.TempDir(), "exports")
	if out := must("workspaces", "retention", ws, "30", dir); !strings.Contains(out, "30 days after their last activity") || !strings.Contains(out, "exported first to "+dir) {
		t.Fatalf("setting 30 days with an export printed %q", out)
	}
	if out := must("workspaces", "retention", ws); !strings.Contains(out, "30 days") || !strings.Contains(out, dir) {
		t.Fatalf("the retention read back = %q; want 30 days and the export directory", out)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"soon"}, `DAYS "soon" must be a whole number of days`},
		{[]string{"0"}, `DAYS "0" must be a whole number of days`},
		{[]string{"7", "relative/dir"}, "must be an absolute path"},
		{[]string{"forever", dir}, "forever takes no export directory"},
	} {
		_, err := sb(append([]string{"workspaces", "retention", ws}, bad.args...)...)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("workspaces retention %s: want an error saying %q, got %v", strings.Join(bad.args, " "), bad.want, err)
		}
	}
	if _, err := sb("workspaces", "retention", uuid.NewString(), "3"); err == nil || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the retention of an unknown workspace: want not found, got %v", err)
	}
	if out := must("workspaces", "retention", ws, "forever"); !strings.Contains(out, "forever") {
		t.Fatalf("taking the retention off printed %q", out)
	}
	if out := must("workspaces", "retention", ws); !strings.Contains(out, "forever") {
		t.Fatalf("the retention after forever = %q", out)
	}
}

// TestPeopleForgetCommand: `people forget` deletes a person's records,
// tokens and identities, redacts what they wrote with -delete-messages
// (given after the person), records the forget in the audit, and a second
// run changes nothing.
func TestPeopleForgetCommand(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	sb := sbAt(db)
	ctx := context.Background()
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
	if err != nil {
		t.Fatal(err)
	}
	ana, err := st.PersonCreate(ctx, &store.PersonCreateParams{Identity: store.Identity{Platform: "slack", Workspace: "T1", UserID: "U1"}, DisplayName: "Ana"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.KeyCreate(ctx, &store.KeyCreateParams{Kind: store.KeyPersonal, Lookup: "ana", SecretHash: make([]byte, 32), PersonID: &ana.ID}); err != nil {
		t.Fatal(err)
	}
	conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryUser, Author: "user:U1", Content: json.RawMessage(`{"text":"my address is 1 Main St","user_id":"U1","user_name":"Ana"}`)}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, err := sb("people", "forget", ana.ID.String(), "-delete-messages")
	if err != nil {
		t.Fatalf("people forget: %v", err)
	}
	for _, want := range []string{"forgot person " + ana.ID.String(), "1 person records", "1 identities", `1 entries now by "deleted user" (their text deleted)`, "1 tokens"} {
		if !strings.Contains(out, want) {
			t.Fatalf("people forget printed %q; want it to say %q", out, want)
		}
	}

	st, err = dial.Open(ctx, dial.Options{DatabaseURL: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.PersonGet(ctx, ana.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the forgotten person: want not found, got %v", err)
	}
	es, err := st.EntryList(ctx, &store.EntryListParams{ConversationID: conv.ID})
	if err != nil || len(es) != 1 {
		t.Fatalf("the conversation's entries: %v, %v", es, err)
	}
	if es[0].Author != store.DeletedUser || strings.Contains(string(es[0].Content), "Main St") || strings.Contains(string(es[0].Content), "Ana") {
		t.Fatalf("the forgotten person's message: author %s, content %s; want the deleted user and no text", es[0].Author, es[0].Content)
	}

	if out, err := sb("audit", "--tool", store.AuditForgetPerson); err != nil || !strings.Contains(out, store.AuditForgetPerson) {
		t.Fatalf("the audit of the forget: %q, %v", out, err)
	}
	out, err = sb("people", "forget", ana.ID.String())
	if err != nil || !strings.Contains(out, "nothing left of person") {
		t.Fatalf("forgetting again: %q, %v; want nothing to do", out, err)
	}
	if _, err := sb("people", "forget", "ana"); err == nil || !strings.Contains(err.Error(), `person "ana" is not an id`) {
		t.Fatalf("forgetting a person named by something else than an id: %v", err)
	}
	if _, err := sb("people", "remember", ana.ID.String()); err == nil {
		t.Fatal("an unknown people command must fail")
	}
}
