package app

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStoreThatNeverAnswersStopsTheStart: a Postgres address that accepts
// connections and never answers stops the start after StoreTimeout with an
// error naming DATABASE_URL and where it points (before: minutes of
// silence), and the start-up log says which store it was opening.
func TestStoreThatNeverAnswersStopsTheStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()

	var logs syncBuf
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = Open(ctx, Config{
		Addr:         "-",
		DatabaseURL:  "postgres://sb:hunter2secret@" + ln.Addr().String() + "/switchboard?sslmode=disable",
		StoreTimeout: 300 * time.Millisecond,
		Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
		Env:          func(string) string { return "" },
		ReloadPoll:   -1,
	})
	if err == nil {
		t.Fatal("Open succeeded against a store that never answers")
	}
	if ctx.Err() != nil {
		t.Fatalf("Open gave up only at the test's deadline: %v", err)
	}
	for _, want := range []string{"DATABASE_URL", "did not answer within 300ms", ln.Addr().String() + "/switchboard"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "hunter2secret") || strings.Contains(logs.String(), "hunter2secret") {
		t.Errorf("the password reached the error or the log: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), `msg="opening the store" dialect=postgres host=`+ln.Addr().String()+" database=switchboard") {
		t.Errorf("the start-up log does not say which store it opens:\n%s", logs.String())
	}
}

// TestStoreWhere: the SQLite file is logged as an absolute path (a typo in
// sqlite:PATH shows where the new, empty database went); Postgres as host,
// database and schema, never the user or password.
func TestStoreWhere(t *testing.T) {
	t.Parallel()
	abs, err := filepath.Abs("data/x.db")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ url, want string }{
		{"sqlite:data/x.db", "sqlite " + abs},
		{"", "sqlite " + filepath.Join(filepath.Dir(abs), "switchboard.db")},
		{"postgres://u:pw@127.0.0.1:5432/prod?sslmode=disable", "postgres 127.0.0.1:5432/prod"},
		{"postgres://u:pw@127.0.0.1:5432/prod?switchboard_schema=team", "postgres 127.0.0.1:5432/prod schema team"},
	} {
		got, _ := storeWhere(c.url)
		if got != c.want {
			t.Errorf("storeWhere(%q) = %q, want %q", c.url, got, c.want)
		}
		if strings.Contains(got, "pw") {
			t.Errorf("storeWhere(%q) = %q shows the password", c.url, got)
		}
	}
}

func TestConsoleURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ public, addr, want string }{
		{"", "[::]:8080", "http://127.0.0.1:8080/"},
		{"", "0.0.0.0:9000", "http://127.0.0.1:9000/"},
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080/"},
		{"https://sb.example.org/", "[::]:8080", "https://sb.example.org/"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := consoleURL(c.public, addr); got != c.want {
			t.Errorf("consoleURL(%q, %s) = %q, want %q", c.public, c.addr, got, c.want)
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
