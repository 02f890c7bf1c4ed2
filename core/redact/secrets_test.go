package redact

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// keyShapes are secrets of the lengths and shapes the service is configured
// with, most of which no pattern recognises.
func keyShapes() []string {
	var keys []string
	for n := 5; n <= 60; n += 5 {
		body := strings.Repeat("aB3dE6gH9j", 6)[:n]
		keys = append(keys,
			body,       // no prefix at all: a proxy's key, a password
			"sk-"+body, // OpenAI-style, short or long
			"sk-ant-api03-"+body,
			"xoxb-"+body,
			"k3y/+"+body+"==", // base64 with characters that get escaped
		)
	}
	return keys
}

func TestRedactorConfiguredSecrets(t *testing.T) {
	for _, key := range keyShapes() {
		t.Run(key, func(t *testing.T) {
			r := New("  " + key + "\n") // as read from a file with a newline
			for _, in := range []string{
				"Incorrect API key provided: " + key + ".",
				"Incorrect API key provided: " + key,
				`{"error":{"message":"invalid key ` + strings.ReplaceAll(key, "/", `\/`) + `"}}`,
				`{"key":` + fmt.Sprintf("%q", key) + `}`,
				"GET https://example.com/v1?k=" + url.QueryEscape(key) + "&x=1",
				key + key, // back to back
			} {
				got := r.String(in)
				if strings.Contains(got, key) || strings.Contains(got, url.QueryEscape(key)) {
					t.Errorf("String(%q) = %q, still contains the key", in, got)
				}
				if again := r.String(got); again != got {
					t.Errorf("String is not idempotent: String(%q) = %q", got, again)
				}
			}
		})
	}
}

func TestRedactorSkips(t *testing.T) {
	r := New("", "   ", "dev", "test", "REDACT", "EDACTED")
	const text = "dev and test text about a REDACTED key"
	if got := r.String(text); got != text {
		t.Errorf("String(%q) = %q, want it unchanged: values shorter than %d and parts of the marker are not secrets", text, got, MinSecretLen)
	}
	if got := r.String("REDACTED"); got != "REDACTED" {
		t.Errorf("String(marker) = %q, want the marker unchanged", got)
	}
}

func TestRedactorLongestFirst(t *testing.T) {
	r := New("abcdef", "abcdefghijkl")
	if got, want := r.String("x abcdefghijkl y abcdef z"), "x REDACTED y REDACTED z"; got != want {
		t.Errorf("String = %q, want %q (a secret containing another is replaced whole)", got, want)
	}
}

func TestRedactorAddLater(t *testing.T) {
	r := New()
	const secret = "p4ssw0rd-added-later"
	if got := r.String("pw " + secret); got != "pw "+secret {
		t.Fatalf("String before Add = %q, want it unchanged", got)
	}
	r.Add(secret)
	r.Add(secret) // twice is harmless
	if got := r.String("pw " + secret); got != "pw REDACTED" {
		t.Errorf("String after Add = %q, want %q", got, "pw REDACTED")
	}
}

func TestNilRedactorUsesPatterns(t *testing.T) {
	var r *Redactor
	if got, want := r.String("Bearer abcdefghij"), "Bearer REDACTED"; got != want {
		t.Errorf("nil Redactor String = %q, want %q", got, want)
	}
}

func TestRedactorError(t *testing.T) {
	const key = "plain-key-77"
	r := New(key)
	base := errors.New("401 Unauthorized: Incorrect API key provided: " + key)
	err := fmt.Errorf("calling model: %w", base)
	got := r.Error(err)
	if strings.Contains(got.Error(), key) {
		t.Fatalf("Error() = %q still has the key", got)
	}
	if !errors.Is(got, base) {
		t.Errorf("errors.Is(redacted, original) = false, want the chain kept")
	}
}

func TestAddSecretsIsProcessWide(t *testing.T) {
	const key = "process-wide-key-4711"
	AddSecrets(key)
	if got := String("key " + key); got != "key REDACTED" {
		t.Errorf("String = %q, want the key registered with AddSecrets redacted", got)
	}
	if got := Error(errors.New("key " + key)); got.Error() != "key REDACTED" {
		t.Errorf("Error = %q, want the key registered with AddSecrets redacted", got)
	}
}
