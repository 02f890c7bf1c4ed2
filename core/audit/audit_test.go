package audit_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

func event(i int) *audit.Event {
	conv := uuid.New()
	ev := audit.FromRecord(&store.AuditRecord{
		ID: uuid.New(), ConversationID: &conv, CallID: fmt.Sprintf("call-%d", i), Agent: "atlas", Actor: "agent:atlas",
		Action: "send_email", Risk: "high", Decision: "confirm", Outcome: store.AuditOK, DecidedBy: "user:U1",
		Detail: json.RawMessage(`{"to":"a@b.c"}`), CreatedAt: time.Now(), UpdatedAt: time.Now(),
	}, uuid.Must(uuid.NewV7()).String())
	return &ev
}

// A receiver verifies what Sign made, and refuses a changed body, another
// key, and a time stamp past the tolerance.
func TestSignature(t *testing.T) {
	key, body, at := []byte("k3y"), []byte(`{"schema":"switchboard.audit.v1"}`), time.Unix(1765090000, 0)
	h := audit.Sign(key, at, body)
	if !strings.HasPrefix(h, "t=1765090000,v1=") || len(h) != len("t=1765090000,v1=")+64 {
		t.Fatalf("header %q: want t=UNIX,v1=64 hex digits", h)
	}
	if err := audit.Verify(key, h, body, at.Add(time.Minute), 0); err != nil {
		t.Fatalf("verifying a good signature: %v", err)
	}
	for _, c := range []struct {
		what   string
		key    []byte
		header string
		body   []byte
		now    time.Time
	}{
		{"a changed body", key, h, []byte(`{"schema":"x"}`), at},
		{"another key", []byte("other"), h, body, at},
		{"a replay after the tolerance", key, h, body, at.Add(6 * time.Minute)},
		{"a time stamp from the future", key, h, body, at.Add(-6 * time.Minute)},
		{"no signature", key, "t=1765090000", body, at},
		{"a changed time stamp", key, strings.Replace(h, "t=1765090000", "t=1765090001", 1), body, at},
	} {
		if err := audit.Verify(c.key, c.header, c.body, c.now, 0); !errors.Is(err, audit.ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", c.what, err)
		}
	}
}

// The webhook posts the event signed, with its id; a redirect is not
// followed (the webhook reaches its own host only) and fails the attempt.
func TestWebhookPost(t *testing.T) {
	var got []byte
	var hdr http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/hook", http.StatusFound)
			return
		}
		got, _ = io.ReadAll(r.Body)
		hdr = r.Header
	}))
	defer srv.Close()
	w, err := audit.NewWebhook(audit.WebhookOptions{URL: srv.URL + "/hook?token=secret", Secret: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	ev := event(1)
	if err := w.Post(t.Context(), ev); err != nil {
		t.Fatalf("posting: %v", err)
	}
	if err := audit.Verify([]byte("k"), hdr.Get(audit.SignatureHeader), got, time.Now(), 0); err != nil {
		t.Fatalf("the delivery's signature: %v", err)
	}
	var back audit.Event
	if err := json.Unmarshal(got, &back); err != nil || back.ID != ev.ID || hdr.Get(audit.EventIDHeader) != ev.ID || back.CallID != "call-1" {
		t.Fatalf("delivered %s (id header %q), %v; want event %s", got, hdr.Get(audit.EventIDHeader), err, ev.ID)
	}
	if strings.Contains(w.Redacted(), "secret") {
		t.Errorf("Redacted() = %s keeps the query", w.Redacted())
	}
	moved, err := audit.NewWebhook(audit.WebhookOptions{URL: srv.URL + "/moved", Secret: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	var se *audit.StatusError
	if err := moved.Post(t.Context(), ev); !errors.As(err, &se) || se.Status != http.StatusFound {
		t.Fatalf("posting to a redirect: %v, want the 302 as a failure", err)
	}
	if _, err := audit.NewWebhook(audit.WebhookOptions{URL: srv.URL, Secret: nil}); err == nil {
		t.Fatal("a webhook without a secret was accepted")
	}
}

// The file sink rotates at max_size_mb: about 4.5 MB written with
// max_size_mb 1 and max_backups 2 leave the current file and the two newest
// rotated ones, none past 1 MB, each line a whole event, holding the last
// events written, each once and in order; with compress the rotated files
// are gzipped.
func TestFileSinkRotates(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "audit.jsonl")
			f, err := audit.NewFile(config.AuditSink{File: path, MaxSizeMB: 1, MaxBackups: 2, Compress: compress})
			if err != nil {
				t.Fatal(err)
			}
			ev := event(0)
			ev.Detail = json.RawMessage(`{"note":"` + strings.Repeat("x", 1000) + `"}`)
			line, _ := json.Marshal(ev)
			n := (9 << 20) / 2 / (len(line) + 1)
			for i := range n {
				ev.CallID = fmt.Sprintf("call-%06d", i)
				if err := f.Write(ev); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			files, err := filepath.Glob(filepath.Join(dir, "audit*"))
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(files) // the rotated ones by time, then audit.jsonl
			if len(files) != 3 || files[2] != path {
				t.Fatalf("files %v: want two rotated ones and the current", files)
			}
			var calls []string
			for _, p := range files {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != 0o600 {
					t.Errorf("%s has mode %v, want 0600", p, st.Mode().Perm())
				}
				var r io.Reader
				fh, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				r = fh
				if p != path {
					if compress != strings.HasSuffix(p, ".gz") {
						t.Errorf("rotated file %s with compress=%v", p, compress)
					}
					if compress {
						if r, err = gzip.NewReader(fh); err != nil {
							t.Fatal(err)
						}
					}
				}
				b, err := io.ReadAll(r)
				fh.Close()
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > 1<<20 {
					t.Errorf("%s holds %d bytes, past max_size_mb 1", p, len(b))
				}
				sc := bufio.NewScanner(strings.NewReader(string(b)))
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					var e audit.Event
					if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
						t.Fatalf("%s: a line that is not a whole event: %v", p, err)
					}
					calls = append(calls, e.CallID)
				}
			}
			// What is kept is the tail of what was written, in order.
			first := n - len(calls)
			if len(calls) < 2*900 || first <= 0 {
				t.Fatalf("the kept files hold %d of %d events; want about three files' worth, the oldest pruned", len(calls), n)
			}
			for i, c := range calls {
				if want := fmt.Sprintf("call-%06d", first+i); c != want {
					t.Fatalf("kept event %d is %s, want %s: the kept files must hold the last events, each once, in order", i, c, want)
				}
			}
		})
	}
}
