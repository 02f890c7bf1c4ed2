// Package migrations holds the schema of each dialect as numbered SQL files,
// embedded in the binary. Drivers apply them in order and record each version
// applied; see Load.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Migration is one numbered file.
type Migration struct {
	Version int
	Name    string // the file name, for error messages
	SQL     string
}

// Load returns the migrations of dialect ("postgres" or "sqlite") in version
// order. File names are NNNN_description.sql; versions must be unique.
func Load(dialect string) ([]Migration, error) {
	entries, err := fs.ReadDir(files, dialect)
	if err != nil {
		return nil, fmt.Errorf("reading migrations for %q: %w", dialect, err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s/%s: name must be NNNN_description.sql", dialect, name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: version %q is not a positive number", dialect, name, num)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migration %s/%s: version %d already used by %s", dialect, name, v, prev)
		}
		seen[v] = name
		body, err := fs.ReadFile(files, path.Join(dialect, name))
		if err != nil {
			return nil, fmt.Errorf("reading migration %s/%s: %w", dialect, name, err)
		}
		out = append(out, Migration{Version: v, Name: dialect + "/" + name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Latest returns the highest version shipped for dialect, 0 when none.
func Latest(dialect string) (int, error) {
	ms, err := Load(dialect)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[len(ms)-1].Version, nil
}
