//go:build chaos

package chaos

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

const (
	// memCheckpoint is the turn count whose RSS the final one is compared to.
	memCheckpoint = 500
	// memGrowth is how much RSS may grow from memCheckpoint turns to
	// CHAOS_MEM_TURNS: state kept per conversation shows up well above it
	// (a 1024-event follower per conversation was about 150 KB each).
	memGrowth = 20 << 20
	// memWindow is how many turns are in flight at once: a few times the
	// service's 8 workers, so they never wait for the test, while the queue
	// stays short and what is measured is what the service keeps, not a
	// backlog.
	memWindow = 32
	// memSettle is how long RSS must stay within memSettleBand before it is
	// read, so the runtime has finished what the load left it to do (the
	// background scavenger returns freed pages gradually).
	memSettle     = 5 * time.Second
	memSettleBand = 1 << 20
	// memSettleMax bounds the wait for RSS to settle; past it the last
	// reading is taken.
	memSettleMax = 60 * time.Second
)

// TestMemory: after 5,000 turns, each a mention starting a thread in a
// channel of its own (a conversation of its own; one channel would pace
// the bot's posts to one a second), the service's RSS is within 20 MB of
// its RSS after 500. A conversation that stays in memory after its turn
// (the old delivery follower did) makes RSS grow with every conversation
// ever served.
func TestMemory(t *testing.T) {
	turns := 5000
	if v := os.Getenv("CHAOS_MEM_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		// The turn number is a thread ts's six digits of microseconds.
		if err != nil || n < 1 || n > 999999 {
			t.Fatalf("CHAOS_MEM_TURNS=%q: want a number from 1 to 999999", v)
		}
		turns = n
	}
	checkpoint := min(memCheckpoint, turns)

	sl := newSlack(t)
	h := newHarness(t, database(t), sl, 0)
	h.slack = sl.fake
	// The whole reply at once: the test measures what the service keeps,
	// not how long a stream takes. It still streams, a word per event.
	h.model.Default(modeltest.Reply{Text: reply})
	// Debug logs of thousands of turns cost CPU that the service's other
	// users on this machine would miss; memory does not depend on them.
	h.env = append(h.env, "SWITCHBOARD_LOG_LEVEL=info")
	h.start()
	h.waitIdle()
	idle := h.settledRSS("idle")

	base := time.Now().Unix()
	started := time.Now()
	h.drive(base, 0, checkpoint)
	h.waitIdle()
	driving := time.Since(started)
	atCheckpoint := h.settledRSS(fmt.Sprintf("after %d turns", checkpoint))
	started = time.Now()
	h.drive(base, checkpoint, turns)
	h.waitIdle()
	driving += time.Since(started)
	atEnd := h.settledRSS(fmt.Sprintf("after %d turns", turns))
	t.Logf("%d turns answered in %s", turns, driving.Round(time.Second))

	mb := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
	db := os.Getenv("CHAOS_DB")
	if db == "" {
		db = "sqlite"
	}
	fmt.Printf("%s %s RSS idle %s MB, after %d turns %s MB, after %d turns %s MB; growth %s MB\n",
		t.Name(), db, mb(idle), checkpoint, mb(atCheckpoint), turns, mb(atEnd), mb(atEnd-atCheckpoint))
	h.stop(syscall.SIGTERM)
	if atEnd-atCheckpoint > memGrowth {
		t.Fatalf("RSS grew %s MB from %d to %d turns, want at most %s MB", mb(atEnd-atCheckpoint), checkpoint, turns, mb(memGrowth))
	}
}

// drive sends the mentions numbered from to to-1, each starting thread
// base.<number> in channel CMEM<number>, keeping at most memWindow of them
// unanswered, and returns once every thread has its whole reply once.
func (h *harness) drive(base int64, from, to int) {
	h.t.Helper()
	thread := func(i int) string { return fmt.Sprintf("%d.%06d", base, i) }
	h.mark(fmt.Sprintf("driving turns %d to %d", from, to-1))
	sent, done := from, from
	progressed := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for sent < to && sent-done < memWindow {
			h.mentionIn(fmt.Sprintf("CMEM%06d", sent), fmt.Sprintf("EvMem%d_%d", base, sent), thread(sent), fmt.Sprintf("question number %d", sent))
			sent++
		}
		<-tick.C
		threads, replies := h.answered(thread(from), thread(to))
		if replies > threads {
			h.t.Fatalf("turns %d to %d: %d replies in %d threads, want one each", from, to-1, replies, threads)
		}
		if threads == to-from {
			return
		}
		if from+threads > done {
			done, progressed = from+threads, time.Now()
		}
		if time.Since(progressed) > waitLong {
			h.t.Fatalf("turns %d to %d: %d answered, none more within %s", from, to-1, done-from, waitLong)
		}
	}
}

// answered counts the threads from first up to (not including) last where
// the bot posted the whole reply in a finished message, and those replies.
func (h *harness) answered(first, last string) (threads, replies int) {
	seen := map[string]bool{}
	for _, m := range h.slack.Messages("") {
		// Thread timestamps share their seconds and width, so they sort
		// as strings.
		if m.User == botUser && !m.Deleted && !m.Streaming && slackShown(m) == reply &&
			m.ThreadTS >= first && m.ThreadTS < last {
			replies++
			seen[m.ThreadTS] = true
		}
	}
	return len(seen), replies
}

// settledRSS waits until the service's RSS holds within memSettleBand for
// memSettle, then returns it.
func (h *harness) settledRSS(what string) int64 {
	h.t.Helper()
	var samples []int64
	deadline := time.Now().Add(memSettleMax)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	window := int(memSettle / time.Second)
	for {
		rss, err := rssOf(h.cmd.Process.Pid)
		if err != nil {
			h.t.Fatalf("reading the service's RSS %s: %v", what, err)
		}
		samples = append(samples, rss)
		if len(samples) > window {
			last := samples[len(samples)-window-1:]
			if slices.Max(last)-slices.Min(last) <= memSettleBand {
				return rss
			}
		}
		if time.Now().After(deadline) {
			h.t.Logf("RSS %s did not settle within %s; last readings %v", what, memSettleMax, samples[max(0, len(samples)-window):])
			return rss
		}
		<-tick.C
	}
}

// rssOf reads VmRSS, the resident set, of process pid, in bytes.
func rssOf(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing VmRSS %q: %w", v, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
