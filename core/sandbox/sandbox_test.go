package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/sandbox"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// newSandbox builds a sandbox whose runs' folders go in a folder of the
// test's, and checks when the test ends that every run removed its own.
func newSandbox(t *testing.T, o sandbox.Options) *sandbox.Sandbox {
	t.Helper()
	testenv.RequireBwrap(t)
	dir := t.TempDir()
	// bwrap runs as nobody when the tests run as root: it must reach the
	// runs' folders.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o.Dir = dir
	o.Logger = testenv.Logger(t)
	s, err := sandbox.New(o)
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	t.Cleanup(func() {
		left, _ := os.ReadDir(dir)
		if len(left) != 0 {
			t.Errorf("a run left its folder behind: %v", left)
		}
	})
	return s
}

func requireLanguage(t *testing.T, s *sandbox.Sandbox, l sandbox.Language) {
	t.Helper()
	if !slices.Contains(s.Available(), l) {
		t.Skipf("no interpreter for %s on this host: %s", l, s.Missing()[l])
	}
}

func run(t *testing.T, s *sandbox.Sandbox, l sandbox.Language, code string, files map[string]string) *sandbox.Result {
	t.Helper()
	requireLanguage(t, s, l)
	res, err := s.Run(t.Context(), l, code, files)
	if err != nil {
		t.Fatalf("Run(%s): %v", l, err)
	}
	t.Logf("exit %d killed %q after %s\nstdout: %s\nstderr: %s", res.ExitCode, res.Killed, res.Duration, res.Stdout, res.Stderr)
	return res
}

func fileNames(fs []sandbox.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// A normal program in each language prints and writes a file; both come
// back, with a changed input file, while an input left as it was does not.
func TestRunReturnsOutputAndFiles(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, sandbox.Options{})
	inputs := map[string]string{"data/in.txt": "3 4\n", "notes.txt": "kept\n", "log.txt": "old\n"}
	for _, tc := range []struct {
		lang sandbox.Language
		code string
	}{
		{sandbox.Python, `
a, b = map(int, open("data/in.txt").read().split())
print("sum", a + b)
open("out.txt", "w").write("product %d\n" % (a * b))
open("log.txt", "a").write("new\n")
`},
		{sandbox.JavaScript, `
const fs = require("fs");
const [a, b] = fs.readFileSync("data/in.txt", "utf8").trim().split(" ").map(Number);
console.log("sum", a + b);
fs.writeFileSync("out.txt", "product " + a * b + "\n");
fs.appendFileSync("log.txt", "new\n");
`},
		{sandbox.Shell, `
read a b < data/in.txt
echo "sum $((a + b))"
echo "product $((a * b))" > out.txt
echo new >> log.txt
`},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			t.Parallel()
			res := run(t, s, tc.lang, tc.code, inputs)
			if res.ExitCode != 0 || res.Stdout != "sum 7\n" || res.Killed != "" || res.Truncated {
				t.Fatalf("exit %d, stdout %q, killed %q; want 0 and \"sum 7\\n\"", res.ExitCode, res.Stdout, res.Killed)
			}
			got := map[string]string{}
			for _, f := range res.Files {
				got[f.Name] = string(f.Data)
			}
			want := map[string]string{"out.txt": "product 12\n", "log.txt": "old\nnew\n"}
			if len(got) != len(want) || got["out.txt"] != want["out.txt"] || got["log.txt"] != want["log.txt"] {
				t.Fatalf("files back = %q; want %q (the unchanged inputs left out)", got, want)
			}
		})
	}
}

// A run has a network namespace of its own: a listener on the host's
// loopback cannot be reached, unless the network is allowed.
func TestRunHasNoNetwork(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_, _ = c.Write([]byte("hello from the host\n"))
			_ = c.Close()
		}
	}()
	code := fmt.Sprintf(`
import socket
try:
    s = socket.create_connection(("127.0.0.1", %d), timeout=3)
    print("connected:", s.recv(100).decode().strip())
except OSError as e:
    print("refused:", e)
`, ln.Addr().(*net.TCPAddr).Port)

	res := run(t, newSandbox(t, sandbox.Options{}), sandbox.Python, code, nil)
	if !strings.HasPrefix(res.Stdout, "refused:") || accepted.Load() != 0 {
		t.Fatalf("without network: stdout %q, %d connections accepted; want the connection refused", res.Stdout, accepted.Load())
	}
	// The same program with the network allowed reaches the listener: the
	// refusal above is the sandbox's doing.
	res = run(t, newSandbox(t, sandbox.Options{Network: true}), sandbox.Python, code, nil)
	if res.Stdout != "connected: hello from the host\n" || accepted.Load() != 1 {
		t.Fatalf("with network: stdout %q, %d connections accepted; want one connection", res.Stdout, accepted.Load())
	}
}

// A program cannot write outside its work folder: the system is
// read-only, the host's folders are not there, and its /tmp is its own.
func TestRunCannotWriteOutside(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, sandbox.Options{})
	own := filepath.Join(t.TempDir(), "host.txt")
	if err := os.WriteFile(own, []byte("host\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	hostTmp := filepath.Join(os.TempDir(), fmt.Sprintf("sandbox-escape-%d", time.Now().UnixNano()))
	t.Cleanup(func() { _ = os.Remove(hostTmp) })
	targets := []string{"/usr/escape.txt", "/etc/escape.txt", "/escape.txt", "/code/main.sh", own}
	code := "for f in " + strings.Join(targets, " ") + "; do\n" +
		"  if echo escaped > \"$f\" 2>/dev/null; then echo \"wrote $f\"; else echo \"refused $f\"; fi\n" +
		"done\n" +
		"echo escaped > " + hostTmp + " && echo \"tmp is its own\"\n" +
		"echo inside > inside.txt\n"
	res := run(t, s, sandbox.Shell, code, nil)
	for _, f := range targets {
		if !strings.Contains(res.Stdout, "refused "+f+"\n") {
			t.Errorf("writing %s was not refused: stdout %q", f, res.Stdout)
		}
	}
	if b, err := os.ReadFile(own); err != nil || string(b) != "host\n" {
		t.Errorf("the test's own file is %q, %v; want it unchanged", b, err)
	}
	if _, err := os.Stat(hostTmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the program's /tmp reached the host's %s: %v", hostTmp, err)
	}
	if !strings.Contains(res.Stdout, "tmp is its own") {
		t.Errorf("the program could not use its own /tmp: %q", res.Stdout)
	}
	if names := fileNames(res.Files); !slices.Equal(names, []string{"inside.txt"}) {
		t.Errorf("files back = %v; want the one written inside", names)
	}
}

// A fork bomb stops at the process limit, the call returns within its
// timeout, nothing of it outlives the call, and the host still forks.
// Not parallel: it counts the processes of the sandbox's uid.
func TestForkBombIsContained(t *testing.T) {
	s := newSandbox(t, sandbox.Options{MaxProcesses: 16, Timeout: 3 * time.Second})
	res := run(t, s, sandbox.Python, `
import os, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    print("forked", n)
except OSError as e:
    print("stopped after", n, "forks:", e.strerror)
`, nil)
	var n int
	if _, err := fmt.Sscanf(res.Stdout, "stopped after %d forks", &n); err != nil || n >= 16 {
		t.Fatalf("stdout %q; want the forks stopped below the limit of 16", res.Stdout)
	}

	// The classic: each process fails to fork at the limit, and the bomb
	// dies out or runs into the timeout, whichever comes first.
	start := time.Now()
	run(t, s, sandbox.Shell, ":(){ :|:& };:\nwait\n", nil)
	if took := time.Since(start); took > 3*time.Second+12*time.Second {
		t.Fatalf("the shell fork bomb's call returned after %s; want it back by its 3s timeout", took)
	}
	deadline := time.Now().Add(5 * time.Second)
	for left := sandboxProcesses(t); len(left) > 0; left = sandboxProcesses(t) {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the sandbox outlived the call: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out, err := exec.CommandContext(t.Context(), "true").CombinedOutput(); err != nil {
		t.Fatalf("the host cannot start a process after the bomb: %v %s", err, out)
	}
}

// sandboxProcesses lists the host's processes running a sandbox's code.
func sandboxProcesses(t *testing.T) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "/code/main.") {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// Each limit stops the program that passes it, and says so.
func TestRunLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  sandbox.Options
		lang  sandbox.Language
		code  string
		check func(t *testing.T, res *sandbox.Result)
	}{
		{"cpu", sandbox.Options{CPUSeconds: 1, Timeout: 20 * time.Second}, sandbox.Python, "while True:\n    pass\n",
			func(t *testing.T, res *sandbox.Result) {
				if res.TimedOut || !strings.Contains(res.Killed, "CPU time limit") || res.Duration > 10*time.Second {
					t.Fatalf("killed %q after %s (timed out %v); want the CPU limit of 1s", res.Killed, res.Duration, res.TimedOut)
				}
			}},
		{"timeout", sandbox.Options{Timeout: time.Second}, sandbox.Shell, "echo started\nsleep 30\necho never\n",
			func(t *testing.T, res *sandbox.Result) {
				if !res.TimedOut || res.ExitCode != -1 || res.Duration > 10*time.Second || res.Stdout != "started\n" {
					t.Fatalf("timed out %v, exit %d after %s, stdout %q; want stopped at 1s with what it printed", res.TimedOut, res.ExitCode, res.Duration, res.Stdout)
				}
			}},
		{"memory", sandbox.Options{MemoryMB: 64}, sandbox.Python,
			"small = bytearray(16 << 20)\nprint('16 MiB ok')\nbig = bytearray(128 << 20)\nprint('128 MiB ok')\n",
			func(t *testing.T, res *sandbox.Result) {
				if res.Stdout != "16 MiB ok\n" || !strings.Contains(res.Stderr, "MemoryError") || res.ExitCode == 0 {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 16 MiB allowed and 128 MiB refused", res.ExitCode, res.Stdout, res.Stderr)
				}
			}},
		{"output", sandbox.Options{MaxOutputBytes: 1000}, sandbox.Python,
			"import sys\nprint('x' * 100000)\nsys.stderr.write('e' * 10)\n",
			func(t *testing.T, res *sandbox.Result) {
				kept, marker, _ := strings.Cut(res.Stdout, "\n[output truncated: ")
				if !res.Truncated || kept != strings.Repeat("x", 1000) || marker != "99001 more bytes dropped]" || res.Stderr != "eeeeeeeeee" {
					t.Fatalf("truncated %v, stdout %d bytes ending %q, stderr %q; want 1000 bytes kept and the cut marked", res.Truncated, len(res.Stdout), res.Stdout[max(0, len(res.Stdout)-60):], res.Stderr)
				}
			}},
		{"file size", sandbox.Options{MaxFileBytes: 1000}, sandbox.Python,
			"try:\n    with open('big.bin', 'wb') as f:\n        f.write(b'x' * 5000)\nexcept OSError as e:\n    print('refused:', e.strerror)\n",
			func(t *testing.T, res *sandbox.Result) {
				if res.Stdout != "refused: File too large\n" {
					t.Fatalf("stdout %q; want the write past 1000 bytes refused", res.Stdout)
				}
				for _, f := range res.Files {
					if len(f.Data) > 1000 {
						t.Fatalf("%s came back with %d bytes, over the 1000 limit", f.Name, len(f.Data))
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t, run(t, newSandbox(t, tc.opts), tc.lang, tc.code, nil))
		})
	}
}

// A file the program wrote past MaxFiles is named, not handed back.
func TestRunCapsFilesBack(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, sandbox.Options{MaxFiles: 2})
	res := run(t, s, sandbox.Shell, "for i in 1 2 3; do echo $i > f$i.txt; done\nln -s /etc/hostname link\n", nil)
	if names := fileNames(res.Files); !slices.Equal(names, []string{"f1.txt", "f2.txt"}) {
		t.Errorf("files back = %v; want the first two", names)
	}
	if !slices.Equal(res.Skipped, []string{"f3.txt: more than 2 files", "link: not a regular file"}) {
		t.Errorf("skipped = %q; want f3.txt past the cap and the link", res.Skipped)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, sandbox.Options{MaxFileBytes: 10})
	for _, tc := range []struct {
		lang  sandbox.Language
		files map[string]string
		want  string
	}{
		{"cobol", nil, `language "cobol"`},
		{sandbox.Shell, map[string]string{"../up.txt": "x"}, `"../up.txt" must be a relative path`},
		{sandbox.Shell, map[string]string{"/etc/x": "x"}, `"/etc/x" must be a relative path`},
		{sandbox.Shell, map[string]string{"big.txt": "12345678901"}, `"big.txt" is 11 bytes, at most 10`},
	} {
		if _, err := s.Run(t.Context(), tc.lang, "true", tc.files); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%s, %v) = %v; want an error with %q", tc.lang, tc.files, err, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	if err := newSandbox(t, sandbox.Options{}).Check(t.Context()); err != nil {
		t.Fatalf("Check on a host with bwrap: %v", err)
	}
	err := newSandbox(t, sandbox.Options{Bwrap: "/nonexistent/bwrap"}).Check(t.Context())
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "install it") {
		t.Fatalf("Check without bwrap = %v; want ErrUnavailable saying to install it", err)
	}
	// bwrap refusing its setup (here: a run folder nobody may enter) is
	// reported with bwrap's own words.
	if os.Geteuid() == 0 {
		s := newSandbox(t, sandbox.Options{})
		closed := filepath.Join(s.Options().Dir, "closed")
		if err := os.Mkdir(closed, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(closed) })
		o := s.Options()
		o.Dir = closed
		s2, err := sandbox.New(o)
		if err != nil {
			t.Fatal(err)
		}
		err = s2.Check(t.Context())
		if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "bwrap") {
			t.Fatalf("Check with a folder nobody may enter = %v; want bwrap's refusal", err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts sandbox.Options
		want string
	}{
		{sandbox.Options{Timeout: -time.Second}, "Options.Timeout"},
		{sandbox.Options{MemoryMB: 8}, "Options.MemoryMB"},
		{sandbox.Options{MaxProcesses: 1}, "Options.MaxProcesses"},
		{sandbox.Options{MaxOutputBytes: 2 << 20}, "Options.MaxOutputBytes"},
		{sandbox.Options{MaxFileBytes: 200 << 20}, "Options.MaxFileBytes"},
		{sandbox.Options{MaxFiles: 101}, "Options.MaxFiles"},
		{sandbox.Options{Dir: "relative"}, "Options.Dir"},
		{sandbox.Options{SearchPath: []string{"bin"}}, "Options.SearchPath"},
	} {
		if _, err := sandbox.New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error naming %s", tc.opts, err, tc.want)
		}
	}
}

// run_code through the registry: offered only to agents naming it, its
// risk declared, its output JSON for the model and its files attachments.
func TestRunCodeTool(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, sandbox.Options{})
	reg := tool.NewRegistry()
	if err := sandbox.RegisterTool(reg, s); err != nil {
		t.Fatal(err)
	}
	tl, ok := reg.Get(sandbox.ToolRunCode)
	if !ok || !tl.OptIn() || tl.Risk() != tool.RiskMedium {
		t.Fatalf("run_code registered %v, opt-in %v, risk %s; want an opt-in tool of medium risk", ok, tl.OptIn(), tl.Risk())
	}
	if !strings.Contains(string(tl.Schema()), `"enum":["python"`) {
		t.Errorf("schema %s does not list the languages found", tl.Schema())
	}
	args, _ := json.Marshal(sandbox.RunCodeIn{Language: "shell", Code: "echo hi; echo 'a,b' > table.csv"})
	res := tl.Call(context.Background(), &tool.Request{}, args)
	if res.IsError {
		t.Fatalf("call failed: %s (%v)", res.Output, res.Err)
	}
	var out sandbox.RunCodeOut
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if out.Stdout != "hi\n" || len(out.Files) != 1 || out.Files[0] != (sandbox.OutFile{Name: "table.csv", Bytes: 4}) {
		t.Fatalf("output %s; want hi and table.csv of 4 bytes", res.Output)
	}
	if strings.Contains(string(res.Output), "a,b") {
		t.Errorf("the file's content reached the model's output: %s", res.Output)
	}
	if len(res.Attachments) != 1 || res.Attachments[0].Name != "table.csv" || string(res.Attachments[0].Data) != "a,b\n" || res.Attachments[0].MimeType != "text/csv; charset=utf-8" {
		t.Fatalf("attachments %+v; want table.csv as text/csv", res.Attachments)
	}
	args, _ = json.Marshal(sandbox.RunCodeIn{Language: "cobol", Code: "x"})
	if res := tl.Call(context.Background(), &tool.Request{}, args); !res.IsError {
		t.Errorf("a language outside the enum ran: %s", res.Output)
	}

	reg = tool.NewRegistry()
	if err := sandbox.RegisterTool(reg, newSandbox(t, sandbox.Options{Network: true})); err != nil {
		t.Fatal(err)
	}
	if tl, _ := reg.Get(sandbox.ToolRunCode); tl.Risk() != tool.RiskHigh {
		t.Errorf("with the network allowed run_code's risk is %s; want high", tl.Risk())
	}
}

// Runs past MaxRuns wait for a slot, and a caller that gives up waiting
// gets its context's error without running.
func TestRunWaitsForASlot(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, sandbox.Options{MaxRuns: 1})
	requireLanguage(t, s, sandbox.Shell)
	start := time.Now()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := s.Run(t.Context(), sandbox.Shell, "sleep 0.5", nil)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took < time.Second {
		t.Fatalf("two half-second runs with one slot took %s; want them one after the other", took)
	}

	held := make(chan error, 1)
	go func() {
		_, err := s.Run(t.Context(), sandbox.Shell, "sleep 2", nil)
		held <- err
	}()
	// Wait until the first run holds the slot: its folder exists.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if left, _ := os.ReadDir(s.Options().Dir); len(left) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run never started")
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Run(ctx, sandbox.Shell, "echo never", nil); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for a sandbox slot") {
		t.Fatalf("a run given up while waiting = %v; want the deadline while waiting for a slot", err)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}
