// Package memtrim gives back, once a service is up, the memory its start-up
// touched and its idle life does not need: the garbage of initialisation
// (returned to the OS) and, on Linux, the pages of its own executable that
// package initialisation and the first requests mapped in.
//
// A Go binary with SDKs for several providers is over 100 MB, and starting
// one maps tens of MB of it (code, read-only data, and the function tables
// the runtime reads to walk stacks), each fault mapping its neighbours too.
// Those pages are clean copies of the file: dropping them from the process
// costs nothing, and the ones still used come back on their next touch.
// What stays resident is what the idle service uses.
//
// Recent kernels keep an executable in the page cache as large folios and
// map a whole folio (up to 2 MB) on a fault, so dropping the mappings alone
// brought most of it back within a second. The trim therefore also marks
// the mappings for random access (no readahead) and asks the kernel to drop
// the file's clean, no longer mapped pages from the page cache: what idling
// touches afterwards is read back a 4 KB page at a time. The cost is a disk
// read, once, for each page a code path first used after the trim touches
// (about 1,200 pages for the first turn of a conversation over the API).
package memtrim

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"
)

// Options configures AfterStart.
type Options struct {
	// Delay is how long after the start to trim, so that what the start
	// set going (first polls, connections) has settled (default 1s).
	Delay  time.Duration
	Logger *slog.Logger
}

// AfterStart waits opts.Delay, or until ctx ends, and then trims: it frees
// the heap's garbage to the OS and drops the executable's clean pages (see
// the package comment). It logs what it dropped at debug level.
func AfterStart(ctx context.Context, opts Options) {
	if opts.Delay == 0 {
		opts.Delay = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	t := time.NewTimer(opts.Delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	debug.FreeOSMemory()
	n, err := dropExecutablePages()
	if err != nil {
		opts.Logger.DebugContext(ctx, "memtrim: not every page of the executable was dropped", "error", err.Error())
		return
	}
	opts.Logger.DebugContext(ctx, "memtrim: dropped the executable's clean pages", "mapped_bytes", n)
}
