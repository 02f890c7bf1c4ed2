package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

type tokenHolder struct{ Token string }

type stringer string

func (s stringer) String() string { return string(s) }

func TestHandler(t *testing.T) {
	const key = "cfg-secret-0042"
	r := New(key)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var next slog.Handler = slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			if format == "json" {
				next = slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			}
			log := slog.New(NewHandler(next, r))

			log.Info("key is "+key, "plain", key)
			log.With("attached", "Bearer "+key).WithGroup("g").Warn("grouped",
				"error", errors.New("401: Incorrect API key provided: "+key),
				slog.Group("inner", "deep", key, "n", 3),
				"struct", tokenHolder{Token: key},
				"stringer", stringer("xoxb-"+key),
				"bytes", []byte("k="+key),
				"lazy", slog.AnyValue(fmt.Sprintf("%s!", key)),
			)
			log.Debug("nothing secret", "n", 7, "ok", true, "err", errors.New("plain failure"))

			out := buf.String()
			if strings.Contains(out, key) {
				t.Fatalf("log output still has the secret:\n%s", out)
			}
			for _, want := range []string{"key is REDACTED", "REDACTED", "nothing secret", "plain failure", "n=7"} {
				if format == "json" && want == "n=7" {
					want = `"n":7`
				}
				if !strings.Contains(out, want) {
					t.Errorf("log output lacks %q:\n%s", want, out)
				}
			}
			if n := strings.Count(out, "\n"); n != 3 {
				t.Errorf("got %d log lines, want 3:\n%s", n, out)
			}
		})
	}
}

func TestHandlerEnabled(t *testing.T) {
	h := NewHandler(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}), nil)
	if h.Enabled(t.Context(), slog.LevelInfo) || !h.Enabled(t.Context(), slog.LevelError) {
		t.Errorf("Enabled does not follow the wrapped handler's level")
	}
}
