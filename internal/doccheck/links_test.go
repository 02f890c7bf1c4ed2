package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	heading   = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	link      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence     = regexp.MustCompile("(?s)```.*?```")
	notInSlug = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// slug is GitHub's anchor of a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	return strings.ReplaceAll(notInSlug.ReplaceAllString(h, ""), " ", "-")
}

func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
		out[slug(m[1])] = true
	}
	return out
}

func TestRelativeLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md", "ARCHITECTURE.md", "CHANGELOG.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cache := map[string]map[string]bool{}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := filepath.Join(filepath.Dir(f), path)
			if path == "" {
				file = f
			}
			if _, err := os.Stat(filepath.Join(root, file)); err != nil {
				t.Errorf("%s: link %q: no file %s", f, target, file)
				continue
			}
			checked++
			if frag == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			if cache[file] == nil {
				cache[file] = anchors(t, filepath.Join(root, file))
			}
			if !cache[file][frag] {
				t.Errorf("%s: link %q: %s has no heading #%s", f, target, file, frag)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d links; the walk missed the docs", checked)
	}
}
