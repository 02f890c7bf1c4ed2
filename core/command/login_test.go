package command

import (
	"context"
	"strings"
	"testing"
	"time"
)

type fakeLogins struct{ asked []string }

func (f *fakeLogins) LoginLink(_ context.Context, platform, workspace, userID string) (string, time.Duration, error) {
	f.asked = append(f.asked, platform+"/"+workspace+"/"+userID)
	return "https://sb.example/login?t=secret-" + userID, 10 * time.Minute, nil
}

// TestLogin: `login` answers with the person's link only where nobody else
// reads it (a DM, or a reply only they see); elsewhere it refuses and
// issues nothing.
func TestLogin(t *testing.T) {
	h, _ := newHandler(t)
	logins := &fakeLogins{}
	h.opts.Logins = logins
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		isDM, private bool
		want          string // "!" prefix: in the error
	}{
		{"in a channel", false, false, "!works in a direct message with me only"},
		{"in a DM", true, false, "https://sb.example/login?t=secret-U1"},
		{"an ephemeral slash command", false, true, "works once, within 10 minutes"},
	} {
		reply, err := h.run(ctx, request{Platform: "slack", Workspace: "T1", Channel: "C1", UserID: "U1", Text: "login", IsDM: tc.isDM, Private: tc.private})
		if want, ok := strings.CutPrefix(tc.want, "!"); ok {
			if !refused(err) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: want a refusal containing %q, got %v (reply %q)", tc.name, want, err, reply)
			}
			continue
		}
		if err != nil || !strings.Contains(reply, tc.want) {
			t.Errorf("%s: reply %q, %v; want it to contain %q", tc.name, reply, err, tc.want)
		}
	}
	if len(logins.asked) != 2 || logins.asked[0] != "slack/T1/U1" {
		t.Errorf("links issued for %v; want two, for slack/T1/U1, none for the channel", logins.asked)
	}
	h.opts.Logins = nil
	if _, err := h.run(ctx, request{Platform: "slack", UserID: "U1", Text: "login", IsDM: true}); err == nil || !strings.Contains(err.Error(), "not served here") {
		t.Errorf("login without a console: %v; want a refusal saying the console is not served", err)
	}
}
