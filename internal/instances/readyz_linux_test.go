package instances_test

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// setFileSizeLimit sets RLIMIT_FSIZE of process pid (prlimit(2)): with 0,
// every write to a file fails (EFBIG), as on a full disk, while reads and
// pipes go on working.
func setFileSizeLimit(t *testing.T, pid int, limit uint64) {
	t.Helper()
	rl := syscall.Rlimit{Cur: limit, Max: ^uint64(0)}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_FSIZE, uintptr(unsafe.Pointer(&rl)), 0, 0, 0); errno != 0 {
		t.Fatalf("prlimit(%d, RLIMIT_FSIZE, %d): %v", pid, limit, errno)
	}
}

// TestReadyzFailsWhenStoreCannotWrite: while every write of the SQLite
// file fails (the process may not write to files at all, as on a full
// disk), /readyz answers 503 and says the store cannot write; once writes
// work again it answers 200. (Before, it answered 200: it only pinged and
// read the schema version.)
func TestReadyzFailsWhenStoreCannotWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a service process")
	}
	w := newSQLiteWorld(t, 3*time.Second)
	w.model.Default(modeltest.Reply{Text: reply})
	p := launch(t, "serve", w.env, "serve")
	p.waitReady()

	setFileSizeLimit(t, p.cmd.Process.Pid, 0)
	var code int
	var body string
	if !poll(waitLong, func() bool { code, body = p.readyz(); return code == http.StatusServiceUnavailable }) {
		t.Fatalf("/readyz while no write can succeed: %d %q, want 503", code, body)
	}
	if !strings.Contains(body, "store cannot write") {
		t.Errorf("/readyz body %q does not say the store cannot write", body)
	}

	setFileSizeLimit(t, p.cmd.Process.Pid, ^uint64(0))
	if !poll(waitLong, func() bool { code, body = p.readyz(); return code == http.StatusOK }) {
		t.Fatalf("/readyz once writes work again: %d %q, want 200", code, body)
	}
}
