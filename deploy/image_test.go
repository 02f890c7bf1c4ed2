package deploy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// containerTool is podman or docker, whichever answers; "" when neither
// can build here. With CI=true a missing tool fails the test.
func containerTool(t *testing.T) string {
	for _, tool := range []string{"podman", "docker"} {
		if _, err := exec.LookPath(tool); err != nil {
			continue
		}
		if err := exec.Command(tool, "info").Run(); err == nil {
			return tool
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("neither podman nor docker answers: CI installs podman (.ci/run)")
	}
	t.Skip("neither podman nor docker answers here")
	return ""
}

// TestImage builds the release image (deploy/docker/Dockerfile.release: the
// static binary on an empty base, which needs no registry) and checks that a
// container of it, as its non-root user, serves on its SQLite volume and
// passes its own health check.
func TestImage(t *testing.T) {
	tool := containerTool(t)

	dir := t.TempDir()
	// The same build as the release's (.goreleaser.yaml). It has a bound
	// of its own: with a cold build cache (a new machine, a new Go) it
	// compiles every dependency static, for minutes under a loaded CI.
	buildCtx, cancelBuild := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancelBuild()
	build := exec.CommandContext(buildCtx, "go", "build", "-trimpath", "-tags", "timetzdata", "-ldflags", "-s -w -X main.version=v0.0.0-imagetest",
		"-o", filepath.Join(dir, "switchboard"), "./cmd/switchboard")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the static binary: %v\n%s", err, out)
	}
	cancelBuild()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(filepath.Join(dir, "deploy/docker/data"), 0o755); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatalf("the release image carries the build host's CA bundle: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy/docker/ca-certificates.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("localhost/switchboard-imagetest:%d", time.Now().UnixNano())
	run(tool, "build", "-q", "--format", "docker", "-f", "docker/Dockerfile.release", "-t", tag, dir)
	t.Cleanup(func() { exec.Command(tool, "rmi", "-f", tag).Run() })

	// A free loopback port for the container, which shares the host's
	// network so the test reaches it on 127.0.0.1 only.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	name := strings.ReplaceAll(strings.TrimPrefix(tag, "localhost/"), ":", "-")
	// SWITCHBOARD_TEST_CONTAINER_ARGS: what this machine's runtime needs
	// (.ci/run sets runc and ulimits the VM allows).
	args := append([]string{"run", "-d", "--name", name, "--network", "host", "-e", "SWITCHBOARD_ADDR=" + addr},
		strings.Fields(os.Getenv("SWITCHBOARD_TEST_CONTAINER_ARGS"))...)
	run(tool, append(args, tag)...)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command(tool, "logs", name).CombinedOutput()
			t.Logf("container log:\n%s", out)
		}
		exec.Command(tool, "rm", "-f", name).Run()
	})

	// Ready within the image's start period, serving its SQLite file from
	// the volume it owns.
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%s %s", resp.Status, body)
			if resp.StatusCode == http.StatusOK {
				break
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container did not become ready in 60s: %s", last)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(last, "sqlite") {
		t.Errorf("/readyz %q: want the embedded SQLite store", last)
	}
	if out := run(tool, "exec", name, "/usr/local/bin/switchboard", "healthcheck"); !strings.Contains(out, "ready") {
		t.Errorf("healthcheck in the container printed %q", out)
	}
	if out := run(tool, "exec", name, "/usr/local/bin/switchboard", "version"); !strings.Contains(out, "v0.0.0-imagetest") {
		t.Errorf("version in the container printed %q, want the stamped release", out)
	}
	user := run(tool, "inspect", "--format", "{{.Config.User}}", tag)
	if user != "65532:65532" {
		t.Errorf("image user %q, want 65532:65532 (non-root)", user)
	}
	// podman and docker place the health check differently in the
	// inspection; either way it names the binary's own check.
	if hc := run(tool, "image", "inspect", tag); !regexp.MustCompile(`(?s)"Health[cC]heck":\s*\{[^}]*"/usr/local/bin/switchboard",\s*"healthcheck"`).MatchString(hc) {
		t.Errorf("the image has no HEALTHCHECK running switchboard healthcheck:\n%s", hc)
	}
}
