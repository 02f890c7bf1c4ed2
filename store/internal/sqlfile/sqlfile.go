// Package sqlfile reads named queries out of .sql files, so that each driver
// keeps its SQL in files of its dialect rather than in Go strings.
//
// A file holds blocks that each start with a line "-- name: QueryName"; the
// block's text up to the next such line is the query. Comment lines are kept
// (databases ignore them).
package sqlfile

import (
	"bufio"
	"fmt"
	"io/fs"
	"strings"
)

// Queries maps query names to their SQL.
type Queries map[string]string

// Get returns the named query; it panics when the name is unknown, because
// that is a programming error found by the first test that runs the query.
func (q Queries) Get(name string) string {
	s, ok := q[name]
	if !ok {
		panic(fmt.Sprintf("sqlfile: no query named %q", name))
	}
	return s
}

// Load parses every *.sql file under dir in fsys.
func Load(fsys fs.FS, dir string) (Queries, error) {
	out := Queries{}
	matches, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("sqlfile: no .sql files in %s", dir)
	}
	for _, m := range matches {
		body, err := fs.ReadFile(fsys, m)
		if err != nil {
			return nil, fmt.Errorf("sqlfile: reading %s: %w", m, err)
		}
		if err := parse(m, string(body), out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MustLoad is Load for package-level variables over embedded files.
func MustLoad(fsys fs.FS, dir string) Queries {
	q, err := Load(fsys, dir)
	if err != nil {
		panic(err)
	}
	return q
}

func parse(file, body string, out Queries) error {
	var name string
	var b strings.Builder
	flush := func() error {
		if name == "" {
			return nil
		}
		sql := strings.TrimSpace(b.String())
		if sql == "" {
			return fmt.Errorf("sqlfile: %s: query %q is empty", file, name)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("sqlfile: %s: query %q defined twice", file, name)
		}
		out[name] = sql
		b.Reset()
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "-- name:"); ok {
			if err := flush(); err != nil {
				return err
			}
			name = strings.TrimSpace(rest)
			if name == "" {
				return fmt.Errorf("sqlfile: %s: a '-- name:' line without a name", file)
			}
			continue
		}
		if name == "" {
			continue // preamble before the first query
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("sqlfile: %s: %w", file, err)
	}
	return flush()
}
