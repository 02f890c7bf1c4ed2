package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// Helpers shared by the Slack and Discord end-to-end tests.

// postgresDatabase returns TEST_DATABASE_URL with a fresh schema of its own
// (switchboard_schema: migrated already, as a SQLite file of testenv is).
func postgresDatabase(tb testing.TB) string {
	tb.Helper()
	base := testenv.PostgresURL(tb)
	schema := testenv.PostgresSchema(tb) // migrated, from the pool; given back when tb ends
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "switchboard_schema=" + schema
}

// logEntries lists a conversation's log entries of one kind ("" for all),
// errors included.
func logEntries(tb testing.TB, st store.Store, conv uuid.UUID, kind store.EntryKind) []*store.Entry {
	tb.Helper()
	all, err := st.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv, WithErrors: true})
	if err != nil {
		tb.Fatalf("listing entries of %s: %v", conv, err)
	}
	var out []*store.Entry
	for _, en := range all {
		if kind == "" || en.Kind == kind {
			out = append(out, en)
		}
	}
	return out
}

func decode[T any](tb testing.TB, e *store.Entry) T {
	tb.Helper()
	v, err := core.Decode[T](e)
	if err != nil {
		tb.Fatalf("decoding %s entry %s: %v", e.Kind, e.ID, err)
	}
	return v
}

// checkOneExchange checks the store side of one answered message: one user
// entry with userText, one assistant entry with reply, no errors.
func checkOneExchange(tb testing.TB, st store.Store, conv uuid.UUID, userText, reply string) {
	tb.Helper()
	users := logEntries(tb, st, conv, store.EntryUser)
	if len(users) != 1 {
		tb.Fatalf("conversation has %d user entries, want exactly 1", len(users))
	}
	if got := decode[core.UserContent](tb, users[0]).Text; got != userText {
		tb.Errorf("user entry text = %q, want %q", got, userText)
	}
	answers := logEntries(tb, st, conv, store.EntryAssistant)
	if len(answers) != 1 {
		tb.Fatalf("conversation has %d assistant entries, want exactly 1", len(answers))
	}
	if got := decode[core.AssistantContent](tb, answers[0]).Text; got != reply {
		tb.Errorf("assistant entry text = %q, want %q", got, reply)
	}
	if errs := logEntries(tb, st, conv, store.EntryError); len(errs) != 0 {
		tb.Errorf("conversation has error entries: %s", errs[0].Content)
	}
}

// openAccess is a switchboard.yaml that lets anyone DM the agents: the
// harnesses of tests that are not about access use it, so that their users
// (strangers to the service) reach the agent. The real default is pairing.
const openAccess = "access:\n  dm_policy: open\n"

// writeConfig writes a switchboard.yaml with body and returns its path.
func writeConfig(tb testing.TB, body string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
