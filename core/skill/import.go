package skill

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Limits bound what an import reads. The zero value means the defaults.
type Limits struct {
	MaxFileBytes  int64 // one file; default DefaultMaxFileBytes
	MaxTotalBytes int64 // one skill (or one archive, or one download); default DefaultMaxTotalBytes
	MaxFiles      int   // files in one skill; default DefaultMaxFiles
}

// Defaults of Limits. The store refuses a skill larger than
// DefaultMaxTotalBytes too.
const (
	DefaultMaxFileBytes  = 1 << 20
	DefaultMaxTotalBytes = 4 << 20
	DefaultMaxFiles      = 200
)

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// collector gathers the files of an import, checking each one, and keeps
// one error per bad file so the person importing sees them all at once.
type collector struct {
	lim   Limits
	src   string // the folder, archive or URL, for messages
	files map[string][]byte
	total int64
	errs  []error
}

func newCollector(src string, lim Limits) *collector {
	return &collector{lim: lim.withDefaults(), src: src, files: map[string][]byte{}}
}

func (c *collector) bad(name, format string, args ...any) {
	c.errs = append(c.errs, &FieldError{File: c.src + ": " + name, Msg: fmt.Sprintf(format, args...)})
}

// add reads one regular file of size bytes (-1 when unknown) from r.
func (c *collector) add(name string, size int64, r io.Reader) {
	name = strings.TrimPrefix(name, "./")
	if err := CheckPath(name); err != nil {
		c.bad(name, "%v", err)
		return
	}
	if size > c.lim.MaxFileBytes {
		c.bad(name, "%d bytes, more than the limit of %d per file", size, c.lim.MaxFileBytes)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r, c.lim.MaxFileBytes+1))
	if err != nil {
		c.bad(name, "reading: %v", err)
		return
	}
	if int64(len(data)) > c.lim.MaxFileBytes {
		c.bad(name, "more than the limit of %d bytes per file", c.lim.MaxFileBytes)
		return
	}
	c.total += int64(len(data))
	if c.total > c.lim.MaxTotalBytes {
		c.bad(name, "the import passes the limit of %d bytes in all", c.lim.MaxTotalBytes)
		return
	}
	if _, dup := c.files[name]; dup {
		c.bad(name, "appears twice")
		return
	}
	c.files[name] = data
}

// skills groups the collected files into skills: SKILL.md at the top is one
// skill; otherwise every top-level folder is one skill and must hold a
// SKILL.md.
func (c *collector) skills() ([]*Skill, error) {
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	groups := map[string]map[string][]byte{}
	if _, ok := c.files[FileName]; ok {
		groups[""] = c.files
	} else {
		for p, data := range c.files {
			dir, rest, ok := strings.Cut(p, "/")
			if !ok {
				c.bad(p, "a loose file: put it in a skill's folder, next to its %s", FileName)
				continue
			}
			if groups[dir] == nil {
				groups[dir] = map[string][]byte{}
			}
			groups[dir][rest] = data
		}
	}
	if len(groups) == 0 {
		c.bad(".", "no files, so no %s", FileName)
	}
	dirs := make([]string, 0, len(groups))
	for d := range groups {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var out []*Skill
	for _, dir := range dirs {
		files := groups[dir]
		md := path.Join(dir, FileName)
		body, ok := files[FileName]
		if !ok {
			c.bad(dir+"/", "missing %s", FileName)
			continue
		}
		if len(files) > c.lim.MaxFiles {
			c.bad(dir+"/", "%d files, more than the limit of %d", len(files), c.lim.MaxFiles)
			continue
		}
		s, err := Parse(c.src+": "+md, body)
		if err != nil {
			c.errs = append(c.errs, err)
			continue
		}
		delete(files, FileName)
		s.Files = files
		if dir != "" && dir != s.Name {
			c.bad(md, "name %q differs from its folder %q", s.Name, dir)
			continue
		}
		out = append(out, s)
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return out, nil
}

// FromDir imports the skill in dir (dir holds SKILL.md) or the skills in its
// sub-folders. A symbolic link is refused: it could point outside the skill.
func FromDir(dir string, lim Limits) ([]*Skill, error) {
	c := newCollector(dir, lim)
	root := os.DirFS(dir)
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			c.bad(p, "%v", err)
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			c.bad(p, "a symbolic link is refused; copy the file into the skill")
		case d.IsDir():
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir // .git and the like
			}
		case !d.Type().IsRegular():
			c.bad(p, "not a regular file")
		default:
			info, err := d.Info()
			if err != nil {
				c.bad(p, "%v", err)
				return nil
			}
			f, err := root.Open(p)
			if err != nil {
				c.bad(p, "%v", err)
				return nil
			}
			defer f.Close()
			c.add(p, info.Size(), f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading skills from %s: %w", dir, err)
	}
	return c.skills()
}

// FromZip imports the skills in a zip archive.
func FromZip(name string, data []byte, lim Limits) ([]*Skill, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a zip archive: %w (%w)", name, ErrInvalid, err)
	}
	c := newCollector(name, lim)
	for _, f := range zr.File {
		mode := f.Mode()
		switch {
		case mode.IsDir():
		case mode&fs.ModeSymlink != 0:
			c.bad(f.Name, "a symbolic link is refused")
		case !mode.IsRegular():
			c.bad(f.Name, "not a regular file")
		default:
			if int64(f.UncompressedSize64) > c.lim.MaxFileBytes || f.UncompressedSize64 > 1<<62 {
				c.bad(f.Name, "%d bytes, more than the limit of %d per file", f.UncompressedSize64, c.lim.MaxFileBytes)
				continue
			}
			rc, err := f.Open()
			if err != nil {
				c.bad(f.Name, "%v", err)
				continue
			}
			c.add(f.Name, int64(f.UncompressedSize64), rc)
			rc.Close()
		}
	}
	return c.skills()
}

// FromTarGz imports the skills in a gzip-compressed tar archive.
func FromTarGz(name string, data []byte, lim Limits) ([]*Skill, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip file: %w (%w)", name, ErrInvalid, err)
	}
	defer gz.Close()
	c := newCollector(name, lim)
	tr := tar.NewReader(gz)
	// The decompressed stream is bounded too: a small archive can inflate
	// into a huge one.
	var read int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading the tar archive: %w (%w)", name, ErrInvalid, err)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
		case tar.TypeSymlink, tar.TypeLink:
			c.bad(h.Name, "a link is refused")
		case tar.TypeReg:
			read += h.Size
			if read > 4*c.lim.MaxTotalBytes {
				return nil, fmt.Errorf("%s: the archive unpacks to more than %d bytes: %w", name, 4*c.lim.MaxTotalBytes, ErrInvalid)
			}
			c.add(h.Name, h.Size, tr)
		default:
			c.bad(h.Name, "not a regular file")
		}
	}
	return c.skills()
}

// FromArchive imports a .zip or .tar.gz by its content.
func FromArchive(name string, data []byte, lim Limits) ([]*Skill, error) {
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return FromZip(name, data, lim)
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return FromTarGz(name, data, lim)
	}
	return nil, fmt.Errorf("%s: neither a .zip nor a .tar.gz archive: %w", name, ErrInvalid)
}

// ReadArchive reads an archive of at most lim.MaxTotalBytes from r.
func ReadArchive(name string, r io.Reader, lim Limits) ([]byte, error) {
	lim = lim.withDefaults()
	data, err := io.ReadAll(io.LimitReader(r, lim.MaxTotalBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > lim.MaxTotalBytes {
		return nil, fmt.Errorf("%s: more than the limit of %d bytes: %w", name, lim.MaxTotalBytes, ErrInvalid)
	}
	return data, nil
}

// FromURL downloads an archive over HTTPS and imports it. client nil means
// http.DefaultClient.
func FromURL(ctx context.Context, client *http.Client, rawURL string, lim Limits) ([]*Skill, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s: only https:// URLs are imported", rawURL)
	}
	if client == nil {
		client = http.DefaultClient
	}
	// A redirect must stay on HTTPS too.
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "https" {
			return fmt.Errorf("redirected to %s: only https:// URLs are imported: %w", req.URL, ErrInvalid)
		}
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		return nil
	}
	client = &c
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("downloading %s: %w", rawURL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downloading %s: %s", rawURL, resp.Status)
	}
	data, err := ReadArchive(rawURL, resp.Body, lim)
	if err != nil {
		return nil, err
	}
	return FromArchive(rawURL, data, lim)
}

// Import imports from a folder, a .zip or .tar.gz file, or an https:// URL.
func Import(ctx context.Context, client *http.Client, src string, lim Limits) ([]*Skill, error) {
	if strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://") {
		return FromURL(ctx, client, src, lim)
	}
	info, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("importing skills: %w", err)
	}
	if info.IsDir() {
		return FromDir(src, lim)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("importing skills: %w", err)
	}
	defer f.Close()
	data, err := ReadArchive(filepath.Base(src), f, lim)
	if err != nil {
		return nil, err
	}
	return FromArchive(src, data, lim)
}
