package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// secretKeys returns API keys of every length from 5 to 60 in the shapes
// keys come in: bare (a proxy's key), OpenAI, OpenAI project, Anthropic,
// and base64 with characters that get escaped. tag makes them unique to a
// test, since redact's registry is process-wide.
func secretKeys(tag string) []string {
	const alnum = "Q7wErT9yUi0pAs2dFg4hJk6lZx8cVb1nM3qW5eR7tY9uI0oP2aS4dF6gH8jK0lZ"
	var keys []string
	for n := 5; n <= 60; n++ {
		for _, prefix := range []string{tag, "sk-" + tag, "sk-proj-" + tag, "sk-ant-api03-" + tag, "k/+" + tag} {
			if len(prefix) >= n {
				continue
			}
			key := prefix + alnum[:n-len(prefix)]
			if strings.HasPrefix(prefix, "k/+") {
				key = key[:n-1] + "="
			}
			keys = append(keys, key)
		}
	}
	return keys
}

// TestConfiguredKeyNeverLeaks is the path of a provider that quotes the key
// it was given ("Incorrect API key provided: ..."): once the key is
// registered, as app.Open does, it is in neither the error a backend returns
// nor its log lines. The logger here has no redact.Handler, so the backend's
// own redaction is what is tested.
func TestConfiguredKeyNeverLeaks(t *testing.T) {
	for _, pc := range httpProviders {
		t.Run(pc.name, func(t *testing.T) {
			for _, key := range secretKeys(pc.name[:1]) {
				t.Run(fmt.Sprintf("%d/%s", len(key), key[:min(len(key), 8)]), func(t *testing.T) {
					redact.AddSecrets(key)
					var logs bytes.Buffer
					log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
					b, fake, _ := newBackend(t, pc, func(o *Options) { o.APIKey = key; o.Logger = log })
					fake.Push(modeltest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: " + key + ". You can find your API key in the console."})
					_, err := b.Generate(context.Background(), userText("hi"), nil)
					var e *Error
					if !errors.As(err, &e) || e.Status != 401 {
						t.Fatalf("Generate error = %v, want a 401 *Error", err)
					}
					if strings.Contains(err.Error(), key) {
						t.Errorf("error %q quotes the key", err)
					}
					if !strings.Contains(err.Error(), "Incorrect API key provided: REDACTED") && !strings.Contains(err.Error(), "-REDACTED") {
						t.Errorf("error %q, want the key shown as REDACTED", err)
					}
					if logs.Len() == 0 {
						t.Fatal("no log line written, want the failure logged")
					}
					if strings.Contains(logs.String(), key) {
						t.Errorf("log quotes the key:\n%s", logs.String())
					}
				})
			}
		})
	}
}

// TestKeyInStreamErrorNeverLeaks covers an error event inside a 200 stream
// that quotes the key after some text was streamed.
func TestKeyInStreamErrorNeverLeaks(t *testing.T) {
	for _, pc := range httpProviders {
		t.Run(pc.name, func(t *testing.T) {
			key := "stream-key-" + pc.name
			redact.AddSecrets(key)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			b, fake, _ := newBackend(t, pc, func(o *Options) { o.APIKey = key; o.Logger = log; o.Retry.MaxAttempts = 2 })
			reply := modeltest.Reply{Text: "partial answer", StreamError: "overloaded_error", ErrorMessage: "overloaded for key " + key}
			if pc.name == ProviderOpenAI {
				reply.StreamError = "server_error"
			}
			fake.Push(reply, reply)
			_, err := b.Generate(context.Background(), userText("hi"), nil)
			if err == nil {
				t.Fatal("Generate succeeded, want the stream error")
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error %q quotes the key", err)
			}
			if strings.Contains(logs.String(), key) {
				t.Errorf("log quotes the key:\n%s", logs.String())
			}
		})
	}
}
