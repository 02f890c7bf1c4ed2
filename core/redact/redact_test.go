package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	const (
		anthropicKey = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH"
		openaiKey    = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789T3BlbkFJabc"
		openaiLegacy = "sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefgh"
		discordToken = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
		jwt          = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	)
	tests := []struct {
		name   string
		in     string
		want   string
		secret string // must not survive redaction
	}{
		{
			name:   "anthropic key",
			in:     "invalid x-api-key " + anthropicKey + " supplied",
			want:   "invalid x-api-key sk-ant-REDACTED supplied",
			secret: "AbCdEfGhIjKlMnOp",
		},
		{
			name:   "switchboard agent key",
			in:     "exchange sbk_09be6ca2c4907fb6_ZvZX1aFyDb53WeMvMbX9OkkeBRsnzpA4IwTuXrS3xAk failed",
			want:   "exchange sbk_09be6ca2c4907fb6_REDACTED failed",
			secret: "ZvZX1aFyDb53",
		},
		{
			name:   "anthropic key in json body",
			in:     `{"error":{"message":"key sk-ant-admin01-zzzzzzzzzzzzzzzzzzzzzzzz is disabled"}}`,
			want:   `{"error":{"message":"key sk-ant-REDACTED is disabled"}}`,
			secret: "zzzzzzzzzzzzzzzz",
		},
		{
			name:   "openai project key",
			in:     "Incorrect API key provided: " + openaiKey + ".",
			want:   "Incorrect API key provided: sk-REDACTED.",
			secret: "T3BlbkFJ",
		},
		{
			name:   "openai legacy key",
			in:     "key=" + openaiLegacy,
			want:   "key=sk-REDACTED",
			secret: "AbCdEfGhIjKlMnOp",
		},
		{
			name:   "short openai key",
			in:     "Incorrect API key provided: sk-abc123.",
			want:   "Incorrect API key provided: sk-REDACTED.",
			secret: "abc123",
		},
		{
			name:   "short openai project key",
			in:     "Incorrect API key provided: sk-proj-x1",
			want:   "Incorrect API key provided: sk-REDACTED",
			secret: "x1",
		},
		{
			name:   "short anthropic key",
			in:     "key sk-ant-a1b2 rejected",
			want:   "key sk-ant-REDACTED rejected",
			secret: "a1b2",
		},
		{
			name: "sk- before a short word is not a key",
			in:   "sk-learn and sk-SK",
			want: "sk-learn and sk-SK",
		},
		{
			name: "openai masked echo with a visible prefix is kept",
			in:   "Incorrect API key provided: sk-abcdef*********************wxyz.",
			want: "Incorrect API key provided: sk-abcdef*********************wxyz.",
		},
		{
			name: "openai masked echo is kept",
			in:   "Incorrect API key provided: sk-proj-****abcd.",
			want: "Incorrect API key provided: sk-proj-****abcd.",
		},
		{
			name:   "authorization bearer header",
			in:     "Authorization: Bearer abc.def-ghi_jkl~mno+pqr/stu==",
			want:   "Authorization: Bearer REDACTED",
			secret: "abc.def",
		},
		{
			name:   "bare bearer token",
			in:     "sent bearer 0123456789abcdef to the proxy",
			want:   "sent bearer REDACTED to the proxy",
			secret: "0123456789abcdef",
		},
		{
			name:   "bearer wrapping a provider key",
			in:     "Authorization: Bearer " + openaiKey,
			want:   "Authorization: Bearer REDACTED",
			secret: "T3BlbkFJ",
		},
		{
			name:   "slack bot token",
			in:     "token xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx rejected",
			want:   "token xoxb-REDACTED rejected",
			secret: "AbCdEfGhIjKl",
		},
		{
			name:   "slack user token",
			in:     "xoxp-123456789012-123456789012-123456789012-abcdef0123456789abcdef0123456789",
			want:   "xoxp-REDACTED",
			secret: "abcdef0123456789",
		},
		{
			name:   "slack legacy workspace token",
			in:     "xoxa-2-123456789012-abcdefabcdef",
			want:   "xoxa-REDACTED",
			secret: "abcdefabcdef",
		},
		{
			name:   "slack refresh token",
			in:     "refresh with xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIz",
			want:   "refresh with xoxe-REDACTED",
			secret: "My0xLTEy",
		},
		{
			name:   "slack rotated user token",
			in:     "xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAxMi0",
			want:   "xoxe.xoxp-REDACTED",
			secret: "Mi0yLTEy",
		},
		{
			name:   "slack app token",
			in:     "SLACK_APP_TOKEN=xapp-1-A0123456789-1234567890123-abcdef0123456789",
			want:   "SLACK_APP_TOKEN=xapp-REDACTED",
			secret: "abcdef0123456789",
		},
		{
			name:   "discord bot authorization",
			in:     "Authorization: Bot " + discordToken,
			want:   "Authorization: Bot REDACTED",
			secret: "GaBcDe",
		},
		{
			name:   "discord bot prefix in prose",
			in:     "login failed for Bot " + discordToken + " (401)",
			want:   "login failed for Bot REDACTED (401)",
			secret: "GaBcDe",
		},
		{
			name:   "discord token alone",
			in:     "DISCORD_BOT_TOKEN is " + discordToken,
			want:   "DISCORD_BOT_TOKEN is REDACTED",
			secret: "GaBcDe",
		},
		{
			name:   "postgres password",
			in:     `connecting to postgres://app:s3cr%21t@db.internal:5432/switchboard?sslmode=require: refused`,
			want:   `connecting to postgres://app:REDACTED@db.internal:5432/switchboard?sslmode=require: refused`,
			secret: "s3cr",
		},
		{
			name:   "https basic auth in url",
			in:     "GET https://admin:hunter2@proxy.example.com/v1/messages",
			want:   "GET https://admin:REDACTED@proxy.example.com/v1/messages",
			secret: "hunter2",
		},
		{
			name:   "redis password without user",
			in:     "dial redis://:topsecret@cache:6379/0 failed",
			want:   "dial redis://:REDACTED@cache:6379/0 failed",
			secret: "topsecret",
		},
		{
			name:   "two urls",
			in:     `"amqp://a:one@h1" and "amqp://b:two@h2"`,
			want:   `"amqp://a:REDACTED@h1" and "amqp://b:REDACTED@h2"`,
			secret: "two",
		},
		{
			name: "at sign in a path is not a password",
			in:   "https://example.com/@user:handle/x and http://host:8080/p",
			want: "https://example.com/@user:handle/x and http://host:8080/p",
		},
		{
			name: "url without password is kept",
			in:   "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
			want: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		},
		{
			name:   "api_key query parameter",
			in:     `POST "https://example.com/v1/chat?api_key=abc123def456&model=x": 401`,
			want:   `POST "https://example.com/v1/chat?api_key=REDACTED&model=x": 401`,
			secret: "abc123def456",
		},
		{
			name:   "token query parameter",
			in:     "wss://gateway.example.com/?v=10&token=zzz999yyy&encoding=json",
			want:   "wss://gateway.example.com/?v=10&token=REDACTED&encoding=json",
			secret: "zzz999yyy",
		},
		{
			name:   "access_token parameter",
			in:     "callback?code=1&access_token=ya29.a0AfH6SMBx",
			want:   "callback?code=1&access_token=REDACTED",
			secret: "ya29",
		},
		{
			name:   "json secret field",
			in:     `{"api_key": "plainsecretvalue", "model": "m"}`,
			want:   `{"api_key": "REDACTED", "model": "m"}`,
			secret: "plainsecretvalue",
		},
		{
			name:   "x-api-key header echo",
			in:     "x-api-key: not-a-known-shape-123",
			want:   "x-api-key: REDACTED",
			secret: "not-a-known-shape-123",
		},
		{
			name:   "jwt",
			in:     "id token " + jwt,
			want:   "id token REDACTED",
			secret: "dBjftJeZ4CVPmB92K27uhbUJU1p1r",
		},
		{
			name: "max_tokens is not a token",
			in:   "max_tokens=4096 and input_tokens: 12 with tokens=5",
			want: "max_tokens=4096 and input_tokens: 12 with tokens=5",
		},
		{
			name: "plain text is untouched",
			in:   "anthropic: 529 overloaded_error: Overloaded. The bot replied in thread 1700000000.000100.",
			want: "anthropic: 529 overloaded_error: Overloaded. The bot replied in thread 1700000000.000100.",
		},
		{
			name: "empty",
			in:   "",
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q)\n got: %q\nwant: %q", tt.in, got, tt.want)
			}
			if tt.secret != "" && strings.Contains(got, tt.secret) {
				t.Errorf("String(%q) = %q still contains the secret %q", tt.in, got, tt.secret)
			}
			if again := String(got); again != got {
				t.Errorf("String is not idempotent: String(%q) = %q", got, again)
			}
		})
	}
}

type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("code %d with Bearer abcdefghijkl", e.code) }

func TestError(t *testing.T) {
	t.Run("nil stays nil", func(t *testing.T) {
		if err := Error(nil); err != nil {
			t.Fatalf("Error(nil) = %v, want nil", err)
		}
	})
	t.Run("clean error is returned as is", func(t *testing.T) {
		orig := errors.New("nothing secret here")
		if got := Error(orig); got != orig {
			t.Fatalf("Error(clean) = %#v, want the same error value", got)
		}
	})
	t.Run("message redacted, chain kept", func(t *testing.T) {
		orig := fmt.Errorf("calling https://u:pw@h/x with key sk-ant-api03-0123456789abcdef: %w", fs.ErrPermission)
		got := Error(orig)
		want := "calling https://u:REDACTED@h/x with key sk-ant-REDACTED: permission denied"
		if got.Error() != want {
			t.Fatalf("Error().Error() = %q, want %q", got.Error(), want)
		}
		if !errors.Is(got, fs.ErrPermission) {
			t.Errorf("errors.Is(redacted, fs.ErrPermission) = false, want true")
		}
		if !errors.Is(got, orig) {
			t.Errorf("errors.Is(redacted, original) = false, want true")
		}
	})
	t.Run("errors.As reaches a typed error", func(t *testing.T) {
		got := Error(fmt.Errorf("wrapped: %w", &codeError{code: 7}))
		var ce *codeError
		if !errors.As(got, &ce) || ce.code != 7 {
			t.Fatalf("errors.As(redacted, *codeError) = %v (%v), want code 7", ce, got)
		}
		if strings.Contains(got.Error(), "abcdefghijkl") {
			t.Errorf("message %q still has the bearer token", got.Error())
		}
		// Wrapping a redacted error keeps the redacted text.
		outer := fmt.Errorf("turn failed: %w", got)
		if strings.Contains(outer.Error(), "abcdefghijkl") {
			t.Errorf("wrapped message %q leaks the bearer token", outer.Error())
		}
	})
}

func BenchmarkString(b *testing.B) {
	msg := `POST "https://api.anthropic.com/v1/messages": 401 Unauthorized {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
	b.Run("baseline_clone", func(b *testing.B) {
		for b.Loop() {
			_ = strings.Clone(msg)
		}
	})
	b.Run("redact", func(b *testing.B) {
		for b.Loop() {
			_ = String(msg)
		}
	})
}
