// Package sandbox runs a short program an agent wrote (Python, JavaScript
// or shell) inside bubblewrap (bwrap), and hands back what it printed and
// the files it wrote.
//
// Each run gets:
//
//   - its own namespaces (user, pid, ipc, uts, cgroup, and network unless
//     Options.Network): no network at all, not even the host's loopback;
//   - a read-only root with a read-only view of the system (/usr and the
//     top-level links or folders into it, a few files of /etc), a fresh
//     /proc and /dev;
//   - a fresh writable work folder (/work, the current directory) and
//     /tmp, both host folders made for the run and removed after it;
//   - no capabilities, a cleared environment, a new session (no
//     controlling terminal), and an unprivileged uid;
//   - resource limits set by prlimit inside the sandbox, before the
//     interpreter starts: CPU seconds (SIGXCPU, then SIGKILL a second
//     later), data memory, processes, file size, open files, no core
//     dumps;
//   - a wall-clock timeout that kills bwrap's process group: bwrap's own
//     --die-with-parent then takes the sandbox's pid 1, and with it every
//     process in the pid namespace.
//
// The process limit is counted by the kernel per user, and the kernel
// never applies it to root: when the service runs as root, bwrap itself is
// started as nobody (65534), so that the limit bites and a breakout lands
// as nobody. That needs unprivileged user namespaces, which Check proves.
//
// What happens on failure: a run that cannot start (bwrap refuses its
// setup) returns an error; a program that fails, times out or hits a limit
// is a Result (exit code, TimedOut, Killed), not an error. The run's
// folders are removed whatever happened.
package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Language is a language the sandbox runs.
type Language string

// The languages.
const (
	Python     Language = "python"
	JavaScript Language = "javascript"
	Shell      Language = "shell"
)

// Languages are every language the sandbox knows, in the order it lists
// them.
var Languages = []Language{Python, JavaScript, Shell}

// interpreters are the programs that run each language, the first found
// wins, and the extension of the file the code is written to.
var interpreters = map[Language]struct {
	programs []string
	ext      string
}{
	Python:     {[]string{"python3"}, ".py"},
	JavaScript: {[]string{"node", "nodejs"}, ".js"},
	Shell:      {[]string{"bash", "sh"}, ".sh"},
}

// nobody is the uid and gid the sandbox runs as inside, and bwrap runs as
// on the host when the service is root.
const nobody = 65534

// Defaults of Options.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMemoryMB       = 256
	DefaultCPUSeconds     = 10
	DefaultMaxProcesses   = 32
	DefaultMaxOutputBytes = 32 << 10
	DefaultMaxFileBytes   = 1 << 20
	DefaultMaxFiles       = 10
	DefaultMaxRuns        = 2
)

// maxCodeBytes bounds the program text; maxOpenFiles is RLIMIT_NOFILE in
// the sandbox.
const (
	maxCodeBytes = 256 << 10
	maxOpenFiles = 256
)

// DefaultSearchPath are the folders, as the sandbox sees them, where the
// interpreters and prlimit are looked for.
var DefaultSearchPath = []string{"/usr/local/bin", "/usr/bin", "/bin"}

// Options configure a Sandbox.
type Options struct {
	// Bwrap is the bubblewrap program; empty: bwrap on PATH.
	Bwrap string
	// Network lets programs use the host's network (every address the
	// host reaches, its loopback included). Off, a run has a network
	// namespace of its own with nothing in it.
	Network bool
	// Timeout is the wall-clock bound of one run. Default 30s.
	Timeout time.Duration
	// MemoryMB bounds each process's data memory (RLIMIT_DATA: heap and
	// private mappings), in MiB. Default 256.
	MemoryMB int
	// CPUSeconds bounds each process's CPU time. Default 10.
	CPUSeconds int
	// MaxProcesses bounds the processes (and threads) a run has at once.
	// Default 32.
	MaxProcesses int
	// MaxOutputBytes bounds what is kept of stdout and of stderr, each;
	// the rest is read and dropped, and the cut marked. Default 32 KiB.
	MaxOutputBytes int
	// MaxFileBytes bounds each file a program writes (RLIMIT_FSIZE), and
	// each input file. Default 1 MiB.
	MaxFileBytes int64
	// MaxFiles bounds the files handed back from one run (and the input
	// files of one run). Default 10.
	MaxFiles int
	// MaxRuns bounds the runs at once; a run past it waits. Default 2.
	MaxRuns int
	// Dir is the host folder where each run's folders are made (and
	// removed). Default: the system's temporary folder. When the service
	// runs as root, nobody must be able to reach it.
	Dir string
	// SearchPath are the folders, as the sandbox sees them, where the
	// interpreters and prlimit are looked for. Default DefaultSearchPath.
	SearchPath []string
	// Logger; default: discard.
	Logger *slog.Logger
}

func (o *Options) defaults() {
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	o.MemoryMB = cmp.Or(o.MemoryMB, DefaultMemoryMB)
	o.CPUSeconds = cmp.Or(o.CPUSeconds, DefaultCPUSeconds)
	o.MaxProcesses = cmp.Or(o.MaxProcesses, DefaultMaxProcesses)
	o.MaxOutputBytes = cmp.Or(o.MaxOutputBytes, DefaultMaxOutputBytes)
	o.MaxFileBytes = cmp.Or(o.MaxFileBytes, DefaultMaxFileBytes)
	o.MaxFiles = cmp.Or(o.MaxFiles, DefaultMaxFiles)
	o.MaxRuns = cmp.Or(o.MaxRuns, DefaultMaxRuns)
	o.Dir = cmp.Or(o.Dir, os.TempDir())
	if len(o.SearchPath) == 0 {
		o.SearchPath = DefaultSearchPath
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	switch {
	case o.Timeout < 0:
		return fmt.Errorf("sandbox: Options.Timeout %s must not be negative", o.Timeout)
	case o.MemoryMB < 16 || o.MemoryMB > 64<<10:
		return fmt.Errorf("sandbox: Options.MemoryMB %d must be between 16 and 65536", o.MemoryMB)
	case o.CPUSeconds < 1:
		return fmt.Errorf("sandbox: Options.CPUSeconds %d must be at least 1", o.CPUSeconds)
	case o.MaxProcesses < 2 || o.MaxProcesses > 4096:
		// 2: bwrap's pid 1 and the interpreter.
		return fmt.Errorf("sandbox: Options.MaxProcesses %d must be between 2 and 4096", o.MaxProcesses)
	case o.MaxOutputBytes < 1 || o.MaxOutputBytes > 1<<20:
		return fmt.Errorf("sandbox: Options.MaxOutputBytes %d must be between 1 and 1048576", o.MaxOutputBytes)
	case o.MaxFileBytes < 1 || o.MaxFileBytes > 100<<20:
		return fmt.Errorf("sandbox: Options.MaxFileBytes %d must be between 1 and 104857600", o.MaxFileBytes)
	case o.MaxFiles < 0 || o.MaxFiles > 100:
		return fmt.Errorf("sandbox: Options.MaxFiles %d must be between 0 and 100", o.MaxFiles)
	case o.MaxRuns < 1:
		return fmt.Errorf("sandbox: Options.MaxRuns %d must be at least 1", o.MaxRuns)
	case !filepath.IsAbs(o.Dir):
		return fmt.Errorf("sandbox: Options.Dir %q must be an absolute path", o.Dir)
	}
	for _, d := range o.SearchPath {
		if !path.IsAbs(d) {
			return fmt.Errorf("sandbox: Options.SearchPath entry %q must be an absolute path", d)
		}
	}
	return nil
}

// Sandbox runs programs. It is safe for concurrent use.
type Sandbox struct {
	o     Options
	runs  chan struct{} // a slot per run at once
	asUID int           // the host uid bwrap runs as; -1: the service's own
}

// New validates o and fills in its defaults. It runs nothing: Check
// proves the host can set a sandbox up.
func New(o Options) (*Sandbox, error) {
	o.defaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := &Sandbox{o: o, runs: make(chan struct{}, o.MaxRuns), asUID: -1}
	if os.Geteuid() == 0 {
		s.asUID = nobody
	}
	return s, nil
}

// Options are the sandbox's settings, defaults filled in.
func (s *Sandbox) Options() Options { return s.o }

// ErrUnavailable is wrapped by Check's and Run's errors when the host
// lacks what a sandbox needs (bwrap, prlimit, an interpreter).
var ErrUnavailable = errors.New("sandbox unavailable")

// bwrap is the bubblewrap program to start.
func (s *Sandbox) bwrap() (string, error) {
	name := cmp.Or(s.o.Bwrap, "bwrap")
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: bubblewrap (%s) not found: install it (Debian and Ubuntu: apt-get install bubblewrap): %v", ErrUnavailable, name, err)
	}
	return p, nil
}

// find looks for the first of programs in the search path, as the
// sandbox sees it: a file that is executable and, symbolic links
// resolved, inside what the sandbox mounts.
func (s *Sandbox) find(programs ...string) (string, bool) {
	for _, dir := range s.o.SearchPath {
		for _, p := range programs {
			full := path.Join(dir, p)
			real, err := filepath.EvalSymlinks(full)
			if err != nil || !visible(real) {
				continue
			}
			fi, err := os.Stat(real)
			if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return full, true
			}
		}
	}
	return "", false
}

// visible reports whether the host path p is inside what the sandbox
// mounts read-only: /usr, and the top-level folders systemMounts binds.
func visible(p string) bool {
	for _, m := range systemMounts() {
		if m.bind && (p == m.dir || strings.HasPrefix(p, m.dir+"/")) {
			return true
		}
	}
	return false
}

// Available lists the languages whose interpreter the sandbox finds.
func (s *Sandbox) Available() []Language {
	var out []Language
	for _, l := range Languages {
		if _, ok := s.find(interpreters[l].programs...); ok {
			out = append(out, l)
		}
	}
	return out
}

// Missing says, for each language without an interpreter, what was
// looked for.
func (s *Sandbox) Missing() map[Language]string {
	out := map[Language]string{}
	for _, l := range Languages {
		in := interpreters[l]
		if _, ok := s.find(in.programs...); !ok {
			out[l] = fmt.Sprintf("%s not found in %s", strings.Join(in.programs, " or "), strings.Join(s.o.SearchPath, ":"))
		}
	}
	return out
}

// Check proves the host can set a sandbox up: it runs a shell program
// that writes a file, through every part a real run uses (bwrap, the
// namespaces, the mounts, prlimit, the uid), and reads both back. The
// error says what is missing or what bwrap refused.
func (s *Sandbox) Check(ctx context.Context) error {
	if _, err := s.bwrap(); err != nil {
		return err
	}
	if len(s.Available()) == 0 {
		return fmt.Errorf("%w: no interpreter found (python3, node, bash or sh in %s)", ErrUnavailable, strings.Join(s.o.SearchPath, ":"))
	}
	lang := s.Available()[0]
	code := map[Language]string{
		Python:     "open('probe.txt', 'w').write('ok')\nprint('sandbox ok')\n",
		JavaScript: "require('fs').writeFileSync('probe.txt', 'ok')\nconsole.log('sandbox ok')\n",
		Shell:      "printf ok > probe.txt\necho sandbox ok\n",
	}[lang]
	res, err := s.Run(ctx, lang, code, nil)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "sandbox ok" {
		return fmt.Errorf("%w: a %s probe in bwrap exited %d (%s): %s", ErrUnavailable, lang, res.ExitCode,
			cmp.Or(res.Killed, "not killed"), strings.TrimSpace(cmp.Or(res.Stderr, res.Stdout)))
	}
	if len(res.Files) != 1 || res.Files[0].Name != "probe.txt" || string(res.Files[0].Data) != "ok" {
		return fmt.Errorf("%w: a %s probe in bwrap wrote probe.txt, but the work folder handed back %d files", ErrUnavailable, lang, len(res.Files))
	}
	return nil
}

// File is a file a program wrote in its work folder.
type File struct {
	Name string // its path relative to the work folder, with /
	Data []byte
}

// Result is what a run did. A program that fails or is stopped is a
// Result, not an error.
type Result struct {
	Stdout, Stderr string
	// Truncated: stdout or stderr was longer than MaxOutputBytes; the
	// kept text ends with a marker saying how much was dropped.
	Truncated bool
	// ExitCode is the program's exit status; -1 when it was killed.
	ExitCode int
	// TimedOut: the run was stopped at its wall-clock timeout.
	TimedOut bool
	// Killed says why the program was stopped, when it was: the timeout,
	// the CPU limit, the file size limit, or the signal.
	Killed   string
	Duration time.Duration
	// Files are the files the program wrote (input files it left
	// unchanged are not), at most MaxFiles.
	Files []File
	// Skipped are files the program wrote that were not handed back, each
	// with why.
	Skipped []string
}

// Run runs code in lang with files (path relative to the work folder →
// content) in the work folder. ctx bounds the wait for a slot and the
// run; Options.Timeout bounds the run as well.
func (s *Sandbox) Run(ctx context.Context, lang Language, code string, files map[string]string) (*Result, error) {
	in, ok := interpreters[lang]
	if !ok {
		return nil, fmt.Errorf("language %q: want one of python, javascript or shell", lang)
	}
	interp, ok := s.find(in.programs...)
	if !ok {
		return nil, fmt.Errorf("%w: %s cannot run here: %s not found in %s", ErrUnavailable, lang, strings.Join(in.programs, " or "), strings.Join(s.o.SearchPath, ":"))
	}
	prlimit, ok := s.find("prlimit")
	if !ok {
		return nil, fmt.Errorf("%w: prlimit not found in %s: install util-linux", ErrUnavailable, strings.Join(s.o.SearchPath, ":"))
	}
	bwrap, err := s.bwrap()
	if err != nil {
		return nil, err
	}
	if len(code) > maxCodeBytes {
		return nil, fmt.Errorf("code: %d bytes, at most %d", len(code), maxCodeBytes)
	}
	if err := s.checkInputs(files); err != nil {
		return nil, err
	}

	select {
	case s.runs <- struct{}{}:
		defer func() { <-s.runs }()
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a sandbox slot: %w", ctx.Err())
	}

	dir, err := os.MkdirTemp(s.o.Dir, "sandbox-")
	if err != nil {
		return nil, fmt.Errorf("making the run's folder in %s (sandbox dir): %w", s.o.Dir, err)
	}
	defer func() {
		if err := removeAll(dir); err != nil {
			s.o.Logger.WarnContext(ctx, "removing a sandbox run's folder", "dir", dir, "err", err)
		}
	}()
	work, tmp, codeDir := filepath.Join(dir, "work"), filepath.Join(dir, "tmp"), filepath.Join(dir, "code")
	codeFile := "main" + in.ext
	if err := s.prepare(dir, work, tmp, codeDir, codeFile, code, files); err != nil {
		return nil, err
	}

	args := s.args(work, tmp, codeDir)
	args = append(args, "--", prlimit,
		// SIGXCPU at the limit, SIGKILL a second later for a program
		// that ignores it.
		fmt.Sprintf("--cpu=%d:%d", s.o.CPUSeconds, s.o.CPUSeconds+1),
		"--data="+strconv.FormatInt(int64(s.o.MemoryMB)<<20, 10),
		"--nproc="+strconv.Itoa(s.o.MaxProcesses),
		"--fsize="+strconv.FormatInt(s.o.MaxFileBytes, 10),
		"--nofile="+strconv.Itoa(maxOpenFiles),
		"--core=0",
		"--", interp, "/code/"+codeFile)

	runCtx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bwrap, args...)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.asUID >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.asUID), Gid: uint32(s.asUID)}
	}
	// The whole group: bwrap and its monitor. The sandbox's pid 1 dies
	// with bwrap (--die-with-parent), and every process of the pid
	// namespace with it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	stdout, stderr := &capped{max: s.o.MaxOutputBytes}, &capped{max: s.o.MaxOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	start := time.Now()
	err = cmd.Run()
	res := &Result{Duration: time.Since(start), ExitCode: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("running %s in the sandbox: %w", lang, ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case err != nil && runCtx.Err() != nil:
		res.TimedOut, res.ExitCode = true, -1
		res.Killed = fmt.Sprintf("wall-clock timeout (%s)", s.o.Timeout)
	case errors.As(err, &exit):
		// bwrap exits 128+n when the program died of signal n.
		if c := res.ExitCode; c > 128 && c < 128+65 {
			res.Killed, res.ExitCode = s.signalReason(syscall.Signal(c-128)), -1
		}
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return nil, fmt.Errorf("starting bwrap (%s): %w", bwrap, err)
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Truncated = stdout.dropped > 0 || stderr.dropped > 0
	if bwrapFailed(res) {
		return nil, fmt.Errorf("%w: bwrap could not set the sandbox up: %s", ErrUnavailable, strings.TrimSpace(res.Stderr))
	}
	res.Files, res.Skipped, err = s.collect(work, files)
	if err != nil {
		return nil, err
	}
	s.o.Logger.DebugContext(ctx, "sandbox run", "language", lang, "exit_code", res.ExitCode, "killed", res.Killed,
		"duration", res.Duration, "files", len(res.Files))
	return res, nil
}

// bwrapFailed reports whether bwrap itself refused to set the sandbox up
// (it exits 1 and says why on stderr, before the program runs).
func bwrapFailed(res *Result) bool {
	return res.ExitCode == 1 && res.Stdout == "" && strings.HasPrefix(res.Stderr, "bwrap: ")
}

func (s *Sandbox) signalReason(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGXCPU:
		return fmt.Sprintf("CPU time limit (%ds)", s.o.CPUSeconds)
	case syscall.SIGKILL:
		return fmt.Sprintf("killed (SIGKILL): past the CPU time limit (%ds) or by the kernel", s.o.CPUSeconds)
	case syscall.SIGXFSZ:
		return fmt.Sprintf("file size limit (%d bytes)", s.o.MaxFileBytes)
	}
	return "signal " + sig.String()
}

// checkInputs refuses input files the work folder cannot take.
func (s *Sandbox) checkInputs(files map[string]string) error {
	if len(files) > max(s.o.MaxFiles, 1) {
		return fmt.Errorf("files: %d input files, at most %d", len(files), max(s.o.MaxFiles, 1))
	}
	for name, content := range files {
		if !filepath.IsLocal(name) || strings.Contains(name, `\`) {
			return fmt.Errorf("files: %q must be a relative path inside the work folder", name)
		}
		if int64(len(content)) > s.o.MaxFileBytes {
			return fmt.Errorf("files: %q is %d bytes, at most %d", name, len(content), s.o.MaxFileBytes)
		}
	}
	return nil
}

// prepare makes the run's folders and writes the code and the inputs.
func (s *Sandbox) prepare(dir, work, tmp, codeDir, codeFile, code string, files map[string]string) error {
	for _, d := range []string{work, tmp, codeDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("making the run's folder: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(codeDir, codeFile), []byte(code), 0o644); err != nil {
		return fmt.Errorf("writing the code: %w", err)
	}
	root, err := os.OpenRoot(work)
	if err != nil {
		return fmt.Errorf("opening the work folder: %w", err)
	}
	defer root.Close()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if d := filepath.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("files: making the folder of %q: %w", name, err)
			}
		}
		if err := root.WriteFile(name, []byte(files[name]), 0o644); err != nil {
			return fmt.Errorf("files: writing %q: %w", name, err)
		}
	}
	if s.asUID < 0 {
		return nil
	}
	// bwrap runs as nobody: the run's folder must be its to enter, and the
	// work folder and /tmp its to write.
	for _, top := range []string{dir, tmp} {
		if err := os.Chown(top, s.asUID, s.asUID); err != nil {
			return fmt.Errorf("handing the run's folder to uid %d: %w", s.asUID, err)
		}
	}
	return filepath.WalkDir(work, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, s.asUID, s.asUID); err != nil {
			return fmt.Errorf("handing the work folder to uid %d: %w", s.asUID, err)
		}
		return nil
	})
}

// mount is a top-level folder of the host's root as the sandbox sees it.
type mount struct {
	dir    string
	bind   bool   // a folder, bound read-only
	target string // a symbolic link's target, made again inside
}

// systemMounts are /usr and the top-level program and library folders
// the host has: merged-/usr hosts have them as links into /usr, older
// ones as folders.
func systemMounts() []mount {
	out := []mount{{dir: "/usr", bind: true}}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				out = append(out, mount{dir: d, target: target})
			}
		case fi.IsDir():
			out = append(out, mount{dir: d, bind: true})
		}
	}
	return out
}

// etcFiles are the parts of /etc programs need: the loader's cache,
// Debian's alternatives, the time zone, certificates (for a run with
// network), and name resolution when the network is shared.
var (
	etcFiles    = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime", "/etc/ssl", "/etc/ca-certificates", "/etc/pki"}
	etcNetFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols"}
)

// args are bwrap's options for a run with these host folders.
func (s *Sandbox) args(work, tmp, codeDir string) []string {
	uid := strconv.Itoa(nobody)
	a := []string{"--unshare-all", "--unshare-user"}
	if s.o.Network {
		a = append(a, "--share-net")
	}
	a = append(a,
		"--uid", uid, "--gid", uid,
		"--die-with-parent", "--new-session",
		"--hostname", "sandbox",
		"--cap-drop", "ALL",
		"--clearenv",
		"--setenv", "PATH", strings.Join(s.o.SearchPath, ":"),
		"--setenv", "HOME", "/work",
		"--setenv", "TMPDIR", "/tmp",
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "PYTHONDONTWRITEBYTECODE", "1",
	)
	for _, m := range systemMounts() {
		if m.bind {
			a = append(a, "--ro-bind", m.dir, m.dir)
		} else {
			a = append(a, "--symlink", m.target, m.dir)
		}
	}
	etc := etcFiles
	if s.o.Network {
		etc = append(slices.Clone(etc), etcNetFiles...)
	}
	for _, f := range etc {
		a = append(a, "--ro-bind-try", f, f)
	}
	return append(a,
		"--proc", "/proc",
		"--dev", "/dev",
		"--bind", tmp, "/tmp",
		"--bind", work, "/work",
		"--ro-bind", codeDir, "/code",
		"--chdir", "/work",
		// The root bwrap built (a tmpfs holding the mount points) read-only
		// too: nothing outside /work and /tmp takes a write.
		"--remount-ro", "/",
	)
}

// collect reads back the files the program wrote in work, through an
// os.Root so no link leads outside it; input files left unchanged are
// not handed back.
func (s *Sandbox) collect(work string, inputs map[string]string) ([]File, []string, error) {
	root, err := os.OpenRoot(work)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the work folder: %w", err)
	}
	defer root.Close()
	var files []File
	var skipped []string
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", name, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || name == "." {
			return nil
		}
		if !d.Type().IsRegular() {
			skipped = append(skipped, name+": not a regular file")
			return nil
		}
		if len(files) >= s.o.MaxFiles {
			skipped = append(skipped, fmt.Sprintf("%s: more than %d files", name, s.o.MaxFiles))
			return nil
		}
		data, err := readCapped(root, name, s.o.MaxFileBytes)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", name, err))
			return nil
		}
		if in, ok := inputs[name]; ok && in == string(data) {
			return nil
		}
		files = append(files, File{Name: name, Data: data})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the work folder: %w", err)
	}
	return files, skipped, nil
}

func readCapped(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// removeAll removes a run's folder even where the program took away its
// own permission to enter or change a folder inside.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// capped keeps the first max bytes written to it and counts the rest, so
// a program printing without end costs no memory.
type capped struct {
	max     int
	buf     bytes.Buffer
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
		c.dropped += int64(len(p) - min(room, len(p)))
	} else {
		c.dropped += int64(len(p))
	}
	return len(p), nil
}

// String is the kept text, valid UTF-8, with a marker when some was
// dropped.
func (c *capped) String() string {
	s := strings.ToValidUTF8(c.buf.String(), "\uFFFD")
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[output truncated: %d more bytes dropped]", c.dropped)
	}
	return s
}
