// Package migrations holds the schema of each dialect as numbered SQL files,
// embedded in the binary. Drivers apply them in order and record each version
// applied; see Load.
//
// Migrations are expand/contract: a release only adds to the schema, so the
// release before it keeps working on the migrated schema while a rolling
// upgrade runs both side by side. A migration that removes or changes what
// an earlier release reads (a dropped or renamed table or column, a changed
// column type, a column made NOT NULL) says which binaries it leaves behind
// with a header line
//
//	-- contract: binaries before schema N stop working
//
// where N is the lowest schema version a binary must ship to run on the
// schema once this migration is applied: the first version whose binaries no
// longer read what the migration takes away (at most the migration's own
// version). The test in this package fails on a migration that takes
// something away without that line. Drivers record the floor with each
// applied version, and a binary refuses a schema whose floor is above the
// newest version it ships.
package migrations

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
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
	// Contract is the floor the file declares in its header (see the
	// package comment), 0 when it declares none: an expand migration.
	Contract int
	// Floor is the lowest schema version a binary may ship and still run
	// on the schema with this migration applied: the highest Contract of
	// this migration and every one before it, 0 when none declares one.
	Floor int
}

// contractLine is the header line of a contract migration; contractPrefix
// is what makes a header line one, so a misspelt one is an error rather
// than silently an expand migration.
var (
	contractLine   = regexp.MustCompile(`^--\s*contract:\s*binaries before schema ([0-9]+) stop working\b`)
	contractPrefix = regexp.MustCompile(`^--\s*contract\b`)
)

// parseContract reads the contract floor from the header of a migration
// file (the comment lines before its first statement); 0 when it has none.
func parseContract(name string, version int, body string) (int, error) {
	floor, header := 0, true
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "--") {
			header = false
			continue
		}
		if !contractPrefix.MatchString(line) {
			continue
		}
		m := contractLine.FindStringSubmatch(line)
		switch {
		case !header:
			return 0, fmt.Errorf("migration %s line %d: the contract line must be in the header, before the first statement", name, n)
		case m == nil:
			return 0, fmt.Errorf("migration %s line %d: want \"-- contract: binaries before schema N stop working\", got %q", name, n, line)
		case floor != 0:
			return 0, fmt.Errorf("migration %s line %d: a second contract line; declare one floor", name, n)
		}
		v, err := strconv.Atoi(m[1])
		if err != nil || v < 1 || v > version {
			return 0, fmt.Errorf("migration %s line %d: floor %s must be between 1 and the migration's own version %d", name, n, m[1], version)
		}
		floor = v
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("migration %s: reading its header: %w", name, err)
	}
	return floor, nil
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
		contract, err := parseContract(dialect+"/"+name, v, string(body))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: dialect + "/" + name, SQL: string(body), Contract: contract})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	WithFloors(out)
	return out, nil
}

// WithFloors sets each migration's Floor from the Contracts of ms, which
// must be in version order: a migration without a contract keeps the floor
// of the one before it.
func WithFloors(ms []Migration) {
	floor := 0
	for i := range ms {
		floor = max(floor, ms[i].Contract)
		ms[i].Floor = floor
	}
}

// Latest returns the highest version shipped for dialect, 0 when none.
func Latest(dialect string) (int, error) {
	ms, err := Load(dialect)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[len(ms)-1].Version, nil
}
