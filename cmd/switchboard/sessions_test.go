package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestSessionsCommands: `switchboard sessions` lists the live console
// sessions and personal tokens in the store with their last use, filters
// by person, and `sessions end` ends one of each kind, which then leaves
// the list and is refused.
func TestSessionsCommands(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + testenv.SQLiteFile(t)
	getenv := env(map[string]string{"DATABASE_URL": db})
	sb := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, getenv, nil, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	out, err := sb("tokens", "create", "--person", uuid.NewString(), "--label", "laptop")
	if err != nil {
		t.Fatalf("tokens create: %v", err)
	}
	token := strings.Fields(out)[0]
	parts := strings.SplitN(token, "_", 3)
	tokenID := parts[0] + "_" + parts[1]

	ctx := context.Background()
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	person := uuid.New()
	now := time.Now()
	l, err := st.LoginCreate(ctx, &store.LoginCreateParams{
		Kind: store.LoginSession, SecretHash: make([]byte, 32), PersonID: &person, Method: store.LoginByOIDC,
		IP: "127.0.0.1", UserAgent: "Firefox/140", ExpiresAt: now.Add(time.Hour), Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}

	out, err = sb("sessions")
	if err != nil || !strings.Contains(out, l.ID.String()) || !strings.Contains(out, "console (oidc)") || !strings.Contains(out, "Firefox/140") || !strings.Contains(out, tokenID) {
		t.Fatalf("sessions = %v\n%s\nwant the oidc console session with its user agent, and the token", err, out)
	}
	out, err = sb("sessions", "list", "--person", person.String(), "--json")
	var got struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got.Sessions) != 1 || got.Sessions[0].ID != l.ID.String() {
		t.Fatalf("sessions list --person --json = %v\n%s\nwant the person's one session", err, out)
	}
	for _, id := range []string{l.ID.String(), tokenID} {
		if out, err := sb("sessions", "end", id); err != nil || !strings.Contains(out, "ended") {
			t.Fatalf("sessions end %s = %v %q", id, err, out)
		}
	}
	if out, _ = sb("sessions"); strings.Contains(out, l.ID.String()) || strings.Contains(out, tokenID) {
		t.Errorf("sessions after ending both:\n%s\nwant neither listed", out)
	}
	if _, err := sb("sessions", "end", "sbk_0000"); err == nil || !strings.Contains(err.Error(), "personal token id (sbp_") {
		t.Errorf("sessions end of an agent key id: %v; want an error naming what an id is", err)
	}
}
