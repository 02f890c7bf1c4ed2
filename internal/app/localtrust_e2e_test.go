package app_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// proxyHeaders are the headers a proxy adds; any of them on a request from
// loopback means the caller is somewhere else.
var proxyHeaders = []struct{ name, value string }{
	{"Forwarded", "for=192.0.2.60;proto=https"},
	{"X-Forwarded-For", "192.0.2.60"},
	{"X-Forwarded-Host", "switchboard.example.com"},
	{"X-Forwarded-Proto", "https"},
	{"X-Forwarded-Port", "443"},
	{"X-Forwarded-Server", "edge"},
	{"X-Real-IP", "192.0.2.60"},
	{"Via", "1.1 nginx"},
	{"CF-Connecting-IP", "192.0.2.60"},
	{"True-Client-IP", "192.0.2.60"},
	{"X-Client-IP", "192.0.2.60"},
}

// TestOnlyDirectLoopbackIsLocal runs the real binary without
// SWITCHBOARD_API_TOKEN on every interface (0.0.0.0) and reaches it over
// 127.0.0.1 only: a request that carries any proxy header is refused on a
// write route and on /metrics, and nothing is stored; the same request
// without the header is served.
func TestOnlyDirectLoopbackIsLocal(t *testing.T) {
	t.Parallel()
	bin := buildSwitchboard(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "sb.db")
	port := freePort(t)
	logPath := filepath.Join(dir, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"DATABASE_URL=sqlite:" + dbPath,
		"SWITCHBOARD_ADDR=0.0.0.0:" + port,
		"SWITCHBOARD_MODEL=anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY=sk-ant-test",
	}
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("serve's log:\n%s", b)
		}
	})
	base := "http://127.0.0.1:" + port // loopback only
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer /healthz within 60s: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}

	do := func(method, path, header, value string) (int, string) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{}`)
		}
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if header != "" {
			req.Header.Set(header, value)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	refused := func(code int) bool { return code == http.StatusUnauthorized || code == http.StatusForbidden }

	for _, h := range proxyHeaders {
		t.Run(h.name, func(t *testing.T) {
			if code, body := do(http.MethodPost, "/api/conversations", h.name, h.value); !refused(code) {
				t.Errorf("POST /api/conversations with %s: %d %s, want 401 or 403", h.name, code, body)
			}
			if code, body := do(http.MethodGet, "/metrics", h.name, h.value); !refused(code) {
				t.Errorf("GET /metrics with %s: %d %.200s, want 401 or 403", h.name, code, body)
			}
			if code, body := do(http.MethodGet, "/api/conversations", h.name, h.value); !refused(code) {
				t.Errorf("GET /api/conversations with %s: %d %.200s, want 401 or 403", h.name, code, body)
			}
		})
	}

	st, err := dial.Open(context.Background(), dial.Options{DatabaseURL: "sqlite:" + dbPath})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	count := func() int {
		convs, err := st.ConversationList(context.Background(), &store.ConversationListParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		return len(convs)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d conversations stored by refused requests, want 0", n)
	}

	// A direct loopback caller with no proxy header is still the operator.
	if code, body := do(http.MethodPost, "/api/conversations", "", ""); code != http.StatusCreated {
		t.Fatalf("POST /api/conversations from loopback without a proxy header: %d %s, want 201", code, body)
	}
	if code, body := do(http.MethodGet, "/metrics", "", ""); code != http.StatusOK || !strings.Contains(body, "switchboard_") {
		t.Fatalf("GET /metrics from loopback without a proxy header: %d %.200s, want 200 with the metrics", code, body)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d conversations stored, want the 1 the direct caller created", n)
	}
}

// freePort is a TCP port nothing listens on at the moment.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}
