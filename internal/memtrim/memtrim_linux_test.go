package memtrim

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestReadOnlyRegionsTakesOnlyTheExecutablesCleanMappings(t *testing.T) {
	maps := `00400000-02b4f000 r-xp 00000000 fe:00 9982898                            /usr/bin/switchboard
02b4f000-061bb000 r--p 0274f000 fe:00 9982898                            /usr/bin/switchboard
061bb000-062c6000 rw-p 05dbb000 fe:00 9982898                            /usr/bin/switchboard
062c6000-08400000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 fe:00 1234                       /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000002000-7f0000003000 r--s 00000000 fe:00 9982898                    /usr/bin/switchboard
`
	got, err := readOnlyRegions([]byte(maps), "/usr/bin/switchboard")
	if err != nil {
		t.Fatal(err)
	}
	want := []region{{0x400000, 0x2b4f000}, {0x2b4f000, 0x61bb000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("regions = %#v, want %#v (never the writable data segment, other files or shared mappings)", got, want)
	}
	if _, err := readOnlyRegions([]byte("zz-0400000 r-xp 0 fe:00 1 /usr/bin/switchboard\n"), "/usr/bin/switchboard"); err == nil {
		t.Fatal("a malformed address parsed")
	}
}

// The test binary drops its own pages and goes on running: the resident
// file pages fall, and code and read-only data still work after it.
func TestDropExecutablePagesShrinksTheResidentSetAndKeepsRunning(t *testing.T) {
	before := rssFileKB(t)
	n, err := dropExecutablePages()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKB(t)
	if n == 0 || after >= before {
		t.Fatalf("advised %d bytes; RssFile %d kB -> %d kB, want it to fall", n, before, after)
	}
	// The mappings are marked for random access (VmFlags "rr"): a page
	// faulted back comes alone, not with a readahead window.
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	random, inExe := 0, false
	exe, _ := os.Executable()
	for _, line := range strings.Split(string(smaps), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && strings.Contains(f[0], "-") {
			inExe = strings.HasSuffix(line, exe) && (f[1] == "r-xp" || f[1] == "r--p")
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && inExe && slices.Contains(strings.Fields(rest), "rr") {
			random++
		}
	}
	if random < 2 {
		t.Fatalf("%d of the executable's read-only mappings advised random access, want its code and read-only data", random)
	}
	// Code and read-only data come back on their next touch.
	if got := strings.Repeat(strconv.Itoa(42), 3); got != "424242" {
		t.Fatalf("after the drop: %q", got)
	}
}

func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
