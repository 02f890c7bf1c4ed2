package web

import (
	"testing"

	"github.com/google/uuid"
)

// TestFrameCacheKeeps: frames read at one content revision are never
// served at another (forgetting a person rewrote the entries); the last
// follower's leaving drops them; over its bytes the cache drops the
// conversation used least recently, and one conversation larger than the
// whole cache is not kept.
func TestFrameCacheKeeps(t *testing.T) {
	t.Parallel()
	c := newFrameCache(100)
	a, b := uuid.New(), uuid.New()
	grow := func(f *convFrames, n int) {
		f.mu.Lock()
		f.pages = append(f.pages, framePage{base: f.size, b: make([]byte, n)})
		f.size += n
		f.mu.Unlock()
		c.grew(f, n)
	}

	fa := c.follow(a, 0, 0)
	grow(fa, 10)
	if again := c.follow(a, 0, 0); again != fa {
		t.Fatal("a second follower at the same revision got other frames")
	}
	newer := c.follow(a, 1, 0)
	if newer == fa || !fa.dropped || newer.size != 0 {
		t.Fatalf("frames of revision 0 served at revision 1 (dropped %v, %d bytes)", fa.dropped, newer.size)
	}
	if c.size != 0 {
		t.Fatalf("the cache counts %d bytes after dropping the only frames; want 0", c.size)
	}
	c.release(newer)
	if c.convs[a] != nil {
		t.Fatal("frames kept after their last follower left")
	}

	fa, fb := c.follow(a, 0, 0), c.follow(b, 0, 0)
	grow(fa, 60)
	grow(fb, 60) // over 100: a, used least recently, goes
	if !fa.dropped || fb.dropped || c.size != 60 {
		t.Fatalf("over its bytes the cache dropped a: %v, b: %v, holds %d bytes; want a dropped, b kept, 60", fa.dropped, fb.dropped, c.size)
	}
	grow(fb, 60) // b alone is more than the cache
	if !fb.dropped || c.size != 0 {
		t.Fatalf("frames of 120 bytes kept in a cache of 100 (dropped %v, size %d)", fb.dropped, c.size)
	}
}
