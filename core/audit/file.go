package audit

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
)

// File appends events to a JSON-lines file, one JSON object a line,
// rotated by size: a line that would take the file past MaxSizeMB first
// renames it NAME-TIMESTAMP.EXT beside it (UTC, 2006-01-02T15-04-05.000, as
// lumberjack names them) and begins a new one; then rotated files past
// MaxBackups, or older than MaxAgeDays, are deleted, and with Compress the
// new rotated file is gzipped (NAME-TIMESTAMP.EXT.gz). Each line is written
// whole in one write; files are created with mode 0600.
//
// The rotation is written here rather than with lumberjack: lumberjack
// v2.2.1 starts a goroutine per logger that its Close never ends, which
// every goleak check of the service's tests reports.
type File struct {
	mu         sync.Mutex
	path       string
	maxSize    int64
	maxBackups int
	maxAge     time.Duration
	compress   bool
	now        func() time.Time
	f          *os.File
	size       int64
}

// NewFile opens (creating) the file of s.
func NewFile(s config.AuditSink) (*File, error) {
	size := s.MaxSizeMB
	if size == 0 {
		size = config.DefaultAuditFileMaxSizeMB
	}
	backups := s.MaxBackups
	if backups == 0 {
		backups = config.DefaultAuditFileMaxBackups
	}
	f := &File{
		path: s.File, maxSize: int64(size) << 20, maxBackups: backups,
		maxAge: time.Duration(s.MaxAgeDays) * 24 * time.Hour, compress: s.Compress, now: time.Now,
	}
	if err := os.MkdirAll(filepath.Dir(s.File), 0o700); err != nil {
		return nil, fmt.Errorf("audit file sink %s: %w", s.File, err)
	}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) open() error {
	fh, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit file sink %s: %w", f.path, err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return fmt.Errorf("audit file sink %s: %w", f.path, err)
	}
	f.f, f.size = fh, st.Size()
	return nil
}

// Write appends ev as one line, rotating first when the line would take
// the file past its size.
func (f *File) Write(ev *Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding audit event %s: %w", ev.ID, err)
	}
	b = append(b, '\n')
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		if err := f.open(); err != nil {
			return err
		}
	}
	if f.size > 0 && f.size+int64(len(b)) > f.maxSize {
		if err := f.rotate(); err != nil {
			return err
		}
	}
	n, err := f.f.Write(b)
	f.size += int64(n)
	if err != nil {
		return fmt.Errorf("writing audit file %s: %w", f.path, err)
	}
	return nil
}

const backupTime = "2006-01-02T15-04-05.000"

// rotate renames the file, starts a new one and keeps the backups in
// bounds.
func (f *File) rotate() error {
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("closing audit file %s: %w", f.path, err)
	}
	f.f = nil
	ext := filepath.Ext(f.path)
	base := strings.TrimSuffix(f.path, ext)
	at := f.now().UTC()
	backup := base + "-" + at.Format(backupTime) + ext
	for exists(backup) || exists(backup+".gz") { // two rotations in one millisecond
		at = at.Add(time.Millisecond)
		backup = base + "-" + at.Format(backupTime) + ext
	}
	if err := os.Rename(f.path, backup); err != nil {
		return fmt.Errorf("rotating audit file %s: %w", f.path, err)
	}
	if err := f.open(); err != nil {
		return err
	}
	var errs []error
	if f.compress {
		errs = append(errs, gzipFile(backup))
	}
	errs = append(errs, f.prune(base, ext))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rotating audit file %s: %w", f.path, err)
	}
	return nil
}

// prune deletes the rotated files past maxBackups (the oldest) or older
// than maxAge.
func (f *File) prune(base, ext string) error {
	matches, err := filepath.Glob(base + "-*" + ext + "*")
	if err != nil {
		return err
	}
	type backup struct {
		path string
		at   time.Time
	}
	var bs []backup
	for _, m := range matches {
		stamp := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(m, base+"-"), ".gz"), ext)
		at, err := time.Parse(backupTime, stamp)
		if err != nil {
			continue // not ours
		}
		bs = append(bs, backup{m, at})
	}
	slices.SortFunc(bs, func(a, b backup) int { return b.at.Compare(a.at) }) // newest first
	var errs []error
	for i, b := range bs {
		if i >= f.maxBackups || (f.maxAge > 0 && f.now().Sub(b.at) > f.maxAge) {
			errs = append(errs, os.Remove(b.path))
		}
	}
	return errors.Join(errs...)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func gzipFile(path string) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(path+".gz", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	err = errors.Join(err, zw.Close(), out.Close())
	if err != nil {
		_ = os.Remove(path + ".gz")
		return err
	}
	return os.Remove(path)
}

// Close closes the file.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}
