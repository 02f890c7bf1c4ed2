package memtrim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dropExecutablePages unmaps the pages of the executable's read-only
// mappings (its code and read-only data; never the writable data segment,
// whose private pages hold the program's globals) with MADV_DONTNEED,
// marks them MADV_RANDOM, and drops the file's unmapped clean pages from the
// page cache. It returns how many bytes of mappings it advised.
func dropExecutablePages() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding the executable: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("reading /proc/self/maps: %w", err)
	}
	regions, err := readOnlyRegions(maps, exe)
	if err != nil {
		return 0, err
	}
	// Without the file (replaced by a deploy, say) the mappings are still
	// dropped; only the page cache keeps its copy.
	f, openErr := os.Open(exe)
	if openErr == nil {
		defer f.Close()
	}
	var total int64
	for _, r := range regions {
		total += int64(r.end - r.start)
		// A page faulted back in later is read on its own, not with a
		// readahead window that the page cache would keep as one large
		// folio, mapped whole (up to 2 MB) on the next fault.
		if err := madvise(r, unix.MADV_RANDOM); err != nil {
			return total, err
		}
	}
	// The page cache holds the file in the large folios its first read
	// left there, and a fault maps a folio whole. Unmapping and then
	// dropping the clean pages no process maps any more turns what idling
	// touches afterwards into single pages. Each pass leaves the folios
	// that the running threads touched in between; the next one takes
	// most of those. Another process running the same binary keeps the
	// pages it maps.
	for range trimPasses {
		for _, r := range regions {
			if err := madvise(r, unix.MADV_DONTNEED); err != nil {
				return total, err
			}
		}
		if openErr != nil {
			continue
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return total, fmt.Errorf("fadvise(DONTNEED) on the executable: %w", err)
		}
	}
	if openErr != nil {
		return total, fmt.Errorf("opening the executable to drop its cached pages: %w", openErr)
	}
	return total, nil
}

// trimPasses is how many times dropExecutablePages unmaps and drops.
const trimPasses = 3

func madvise(r region, advice uintptr) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, advice); errno != 0 {
		return fmt.Errorf("madvise(%d) %#x-%#x: %w", advice, r.start, r.end, errno)
	}
	return nil
}

type region struct{ start, end uintptr }

// readOnlyRegions parses /proc/self/maps for path's mappings that are
// neither writable nor shared: "r-xp" and "r--p".
func readOnlyRegions(maps []byte, path string) ([]region, error) {
	var out []region
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode pathname
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != path {
			continue
		}
		if perms := f[1]; perms != "r-xp" && perms != "r--p" {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("/proc/self/maps: address range %q", f[0])
		}
		start, err := strconv.ParseUint(lo, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/self/maps: address %q: %w", lo, err)
		}
		end, err := strconv.ParseUint(hi, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/self/maps: address %q: %w", hi, err)
		}
		out = append(out, region{uintptr(start), uintptr(end)})
	}
	return out, sc.Err()
}
