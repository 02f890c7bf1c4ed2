//go:build !unix

package coding

import (
	"context"
	"sync"
)

var locks sync.Map

// lock is a lock within this process where flock is missing: instances
// sharing a data folder need a unix host.
func lock(ctx context.Context, path string) (func(), error) {
	m, _ := locks.LoadOrStore(path, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock, nil
}
