package matrix

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/switchboardhq/switchboard/bots"
)

// TestTxnID: a post's transaction ids are the same for the same key, kind
// and part (so a re-post after a crash is the same request), differ
// otherwise, and fit a path segment; without a key each is fresh.
func TestTxnID(t *testing.T) {
	a, b := txnID("0194f0c2-0000-7000-8000-000000000001", "p", 0), txnID("0194f0c2-0000-7000-8000-000000000001", "p", 0)
	if a != b {
		t.Fatalf("txnID is %q then %q for the same post; want the same", a, b)
	}
	for _, other := range []string{
		txnID("0194f0c2-0000-7000-8000-000000000001", "p", 1),
		txnID("0194f0c2-0000-7000-8000-000000000001", "s", 0),
		txnID("0194f0c2-0000-7000-8000-000000000002", "p", 0),
	} {
		if other == a {
			t.Errorf("txnID %q repeats for another part, kind or key", other)
		}
	}
	if strings.ContainsAny(a, "/?#% ") {
		t.Errorf("txnID %q has characters a path segment would escape", a)
	}
	if txnID("", "p", 0) == txnID("", "p", 0) {
		t.Errorf("txnID without a key repeats; want a fresh one each time")
	}
}

func TestMentions(t *testing.T) {
	a := &Adapter{bot: id.UserID("@switchboard:example.org"), botName: "Switch Board"}
	withMentions := func(ids ...string) *content {
		c := &content{}
		c.Mentions = &struct {
			UserIDs []string `json:"user_ids"`
		}{UserIDs: ids}
		return c
	}
	cases := []struct {
		name string
		c    *content
		want bool
	}{
		{"pill", func() *content { c := withMentions("@switchboard:example.org"); c.Body = "Switch Board: hi"; return c }(), true},
		{"someone else's pill", func() *content { c := withMentions("@bob:example.org"); c.Body = "switchboard: hi"; return c }(), false},
		{"display name, no m.mentions", &content{Body: "switch board: what now?"}, true},
		{"localpart, no m.mentions", &content{Body: "@switchboard, what now?"}, true},
		{"user id in the text", &content{Body: "ask @switchboard:example.org please"}, true},
		{"the word later", &content{Body: "the switchboard is down"}, false},
	}
	for _, tc := range cases {
		if got := a.mentions(tc.c); got != tc.want {
			t.Errorf("%s: mentions(%q) = %v, want %v", tc.name, tc.c.Body, got, tc.want)
		}
	}
	if got := a.stripMention("Switch Board: what now?"); got != "what now?" {
		t.Errorf("stripMention = %q, want %q", got, "what now?")
	}
}

func TestRetryAfter(t *testing.T) {
	limited := mautrix.HTTPError{
		Response:  &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}},
		RespError: &mautrix.RespError{ErrCode: "M_LIMIT_EXCEEDED", ExtraData: map[string]any{"retry_after_ms": float64(1500)}},
	}
	if d, ok := retryAfter(limited); !ok || d != 1500*time.Millisecond {
		t.Errorf("retryAfter(429 with retry_after_ms 1500) = %s, %v; want 1.5s, true", d, ok)
	}
	huge := limited
	huge.RespError = &mautrix.RespError{ErrCode: "M_LIMIT_EXCEEDED", ExtraData: map[string]any{"retry_after_ms": float64(3600000)}}
	if d, _ := retryAfter(huge); d != maxRetryAfter {
		t.Errorf("retryAfter(an hour) = %s; want the cap %s", d, maxRetryAfter)
	}
	forbidden := mautrix.HTTPError{Response: &http.Response{StatusCode: http.StatusForbidden}, RespError: &mautrix.RespError{ErrCode: "M_FORBIDDEN"}}
	if _, ok := retryAfter(forbidden); ok {
		t.Errorf("retryAfter(403) reports a rate limit")
	}
	if _, ok := retryAfter(errors.New("boom")); ok {
		t.Errorf("retryAfter(a plain error) reports a rate limit")
	}
}

func TestSameKey(t *testing.T) {
	if !sameKey("1️⃣", "1\u20e3") {
		t.Errorf("a keycap with and without its variation selector differ")
	}
	if sameKey("1️⃣", "2️⃣") {
		t.Errorf("1️⃣ and 2️⃣ compare equal")
	}
}

// TestRefusal: what sending again cannot cure is a bots.ErrRefused; a rate
// limit and a server error are not (delivery retries them).
func TestRefusal(t *testing.T) {
	resp := func(status int, code string) error {
		return mautrix.HTTPError{Response: &http.Response{StatusCode: status}, RespError: &mautrix.RespError{ErrCode: code}}
	}
	for _, code := range []string{"M_FORBIDDEN", "M_TOO_LARGE", "M_NOT_FOUND"} {
		if err := refusal(resp(400, code)); !errors.Is(err, bots.ErrRefused) {
			t.Errorf("refusal(%s) = %v; want bots.ErrRefused", code, err)
		}
	}
	for _, code := range []string{"M_LIMIT_EXCEEDED", "M_UNKNOWN"} {
		if err := refusal(resp(500, code)); errors.Is(err, bots.ErrRefused) {
			t.Errorf("refusal(%s) is a refusal; want it retried", code)
		}
	}
}
