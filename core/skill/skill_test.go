package skill

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tool"
)

const goodMD = `---
name: meeting-notes
description: Turn a transcript into decisions and action items.
allowed-tools: remind calendar_create
requires-tools: [calendar_*]
contexts: [slack, discord]
extra: kept in the front matter
---
# Steps
Do the thing.
`

func TestParse(t *testing.T) {
	s, err := Parse("x/SKILL.md", []byte(goodMD))
	if err != nil {
		t.Fatalf("parsing a valid SKILL.md: %v", err)
	}
	if s.Name != "meeting-notes" || s.Description != "Turn a transcript into decisions and action items." {
		t.Errorf("name %q description %q: want the front matter's", s.Name, s.Description)
	}
	if strings.Join(s.AllowedTools, ",") != "remind,calendar_create" {
		t.Errorf("allowed-tools as a space-separated string: got %v", s.AllowedTools)
	}
	if len(s.Contexts) != 2 || s.Contexts[0] != tool.ContextSlack {
		t.Errorf("contexts: got %v, want [slack discord]", s.Contexts)
	}
	if s.Instructions != "# Steps\nDo the thing." {
		t.Errorf("instructions: got %q", s.Instructions)
	}
	if !strings.Contains(string(s.FrontMatter), "extra: kept") {
		t.Errorf("front matter should keep unknown fields, got %q", s.FrontMatter)
	}
	again, err := Parse("again", s.Markdown())
	if err != nil || again.Name != s.Name || again.Instructions != s.Instructions {
		t.Errorf("Markdown should parse back to the same skill: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     []string // substrings of the error
	}{
		{"no front matter", "# hi\n", []string{"f/SKILL.md", "no front matter"}},
		{"not closed", "---\nname: a\n", []string{"not closed"}},
		{"bad yaml", "---\nname: [\n---\nbody\n", []string{"not valid YAML"}},
		{"bad name", "---\nname: Meeting_Notes\ndescription: d\n---\nbody\n", []string{"f/SKILL.md: name:", "lowercase"}},
		{"double hyphen", "---\nname: a--b\ndescription: d\n---\nbody\n", []string{"name:"}},
		{"missing name and description", "---\nallowed-tools: [x]\n---\nbody\n", []string{"name: missing", "description: missing"}},
		{"long name", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\nbody\n", []string{"at most 64"}},
		{"bad context", "---\nname: a\ndescription: d\ncontexts: [moon]\n---\nbody\n", []string{"contexts:", `"moon"`}},
		{"bad pattern", "---\nname: a\ndescription: d\nrequires-tools: [\"cal[\"]\n---\nbody\n", []string{"requires-tools:"}},
		{"pattern as allowed tool", "---\nname: a\ndescription: d\nallowed-tools: [cal_*]\n---\nbody\n", []string{"allowed-tools:"}},
		{"no instructions", "---\nname: a\ndescription: d\n---\n", []string{"no instructions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f/SKILL.md", []byte(tc.md))
			if err == nil {
				t.Fatalf("want an error, got none")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q should contain %q", err, w)
				}
			}
		})
	}
}

func mk(name, desc string) *Skill {
	return &Skill{Name: name, Description: desc, Instructions: "i-" + desc}
}

func TestResolveMostSpecificWins(t *testing.T) {
	got := Resolve([]Layered{
		{LayerAgent, mk("a", "agent a")},
		{LayerPlatform, mk("a", "platform a")},
		{LayerOwner, mk("a", "owner a")},
		{LayerPlatform, mk("b", "platform b")},
		{LayerOwner, mk("b", "owner b")},
		{LayerPlatform, mk("c", "platform c")},
	})
	var desc []string
	for _, s := range got {
		desc = append(desc, s.Description)
	}
	if strings.Join(desc, "|") != "agent a|owner b|platform c" {
		t.Errorf("resolved: got %v, want agent over owner over platform, by name", desc)
	}
}

func TestActive(t *testing.T) {
	s := &Skill{Name: "cal", RequiresTools: []string{"calendar_*", "remind"}, Contexts: []tool.ContextName{tool.ContextSlack}}
	for _, tc := range []struct {
		tools []string
		ctx   tool.ContextName
		want  bool
	}{
		{[]string{"calendar_list", "remind"}, tool.ContextSlack, true},
		{[]string{"calendar_list"}, tool.ContextSlack, false},               // remind missing
		{[]string{"remind", "calendars"}, tool.ContextSlack, false},         // no calendar_ tool
		{[]string{"calendar_list", "remind"}, tool.ContextDiscord, false},   // wrong context
		{[]string{"calendar_list", "remind"}, tool.ContextScheduler, false}, // wrong context
	} {
		if got := s.Active(tc.tools, tc.ctx); got != tc.want {
			t.Errorf("Active(%v, %s) = %v, want %v", tc.tools, tc.ctx, got, tc.want)
		}
	}
	if !(&Skill{Name: "any"}).Active(nil, tool.ContextWeb) {
		t.Error("a skill without rules should be offered everywhere")
	}
	offered := Offered([]Layered{{LayerPlatform, s}, {LayerPlatform, mk("free", "x")}}, []string{"remind"}, tool.ContextSlack)
	if len(offered) != 1 || offered[0].Name != "free" {
		t.Errorf("Offered: got %d skills, want only free", len(offered))
	}
	idx := Index(offered)
	if !strings.Contains(idx, "- free: x\n") || strings.Contains(idx, "cal") {
		t.Errorf("index: got %q", idx)
	}
	if Index(nil) != "" {
		t.Error("no skills: want an empty index")
	}
}

func TestGrantTools(t *testing.T) {
	s := &Skill{AllowedTools: []string{"remind", "web_search"}}
	got := GrantTools([]string{"remind", "ask"}, s)
	if strings.Join(got, ",") != "remind,ask,web_search" {
		t.Errorf("granted: got %v", got)
	}
	if GrantTools(nil, s) != nil {
		t.Error("an agent with every tool keeps every tool")
	}
}

func call(t *testing.T, tl *tool.Tool, args any) (string, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	res := tl.Call(context.Background(), &tool.Request{Agent: "a", Context: tool.ContextSlack}, b)
	return string(res.Output), res.IsError
}

func TestTools(t *testing.T) {
	s := mk("notes", "d")
	s.Files = map[string][]byte{"templates/a.md": []byte("TEMPLATE")}
	tools, err := Tools(func(ctx context.Context, req *tool.Request) ([]Layered, error) {
		return []Layered{{LayerAgent, s}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	load, read := tools[0], tools[1]
	if out, isErr := call(t, load, LoadInput{Name: "notes"}); isErr || !strings.Contains(out, "i-d") || !strings.Contains(out, "templates/a.md") {
		t.Errorf("load_skill: got %s (error %v), want the instructions and file list", out, isErr)
	}
	if out, isErr := call(t, load, LoadInput{Name: "other"}); !isErr || !strings.Contains(out, "no skill") {
		t.Errorf("load_skill of a skill not offered: got %s", out)
	}
	if out, isErr := call(t, read, ReadFileInput{Name: "notes", Path: "templates/a.md"}); isErr || !strings.Contains(out, "TEMPLATE") {
		t.Errorf("read_skill_file: got %s", out)
	}
	for _, p := range []string{"../notes/templates/a.md", "templates/../../x", "/etc/passwd", "templates/./a.md", "nope.md"} {
		if out, isErr := call(t, read, ReadFileInput{Name: "notes", Path: p}); !isErr {
			t.Errorf("read_skill_file %q: want an error, got %s", p, out)
		}
	}
}

func TestBuiltin(t *testing.T) {
	got, err := Builtin()
	if err != nil || len(got) == 0 {
		t.Fatalf("built-in skills: %v (%d)", err, len(got))
	}
	if got[0].Name != "meeting-notes" || got[0].Files["template.md"] == nil {
		t.Errorf("meeting-notes should ship with its template, got %s %v", got[0].Name, got[0].FileNames())
	}
}

const mdA = "---\nname: alpha\ndescription: first\n---\nDo alpha.\n"

type file struct {
	name, body string
	link       bool
}

func zipOf(t *testing.T, files []file) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if f.link {
			h.SetMode(os.ModeSymlink | 0o777)
		}
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(f.body))
	}
	w.Close()
	return b.Bytes()
}

func tgzOf(t *testing.T, files []file) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}
		if f.link {
			h = &tar.Header{Name: f.name, Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if !f.link {
			tw.Write([]byte(f.body))
		}
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

func writeDir(t *testing.T, files []file) string {
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if f.link {
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var small = Limits{MaxFileBytes: 1000}

func TestImport(t *testing.T) {
	good := []file{{"alpha/SKILL.md", mdA, false}, {"alpha/ref/a.txt", "ref", false}, {"beta/SKILL.md", strings.ReplaceAll(mdA, "alpha", "beta"), false}}
	bad := map[string]struct {
		files []file
		want  string
	}{
		"oversized file":   {append(good[:2:2], file{"alpha/big.bin", strings.Repeat("x", 1001), false}), "alpha/big.bin: 1001 bytes, more than the limit"},
		"missing SKILL.md": {append(good[:2:2], file{"gamma/notes.txt", "x", false}), "gamma/: missing SKILL.md"},
		"symlink":          {append(good[:2:2], file{"alpha/passwd", "", true}), "alpha/passwd:"},
		"name mismatch":    {[]file{{"other/SKILL.md", mdA, false}}, `name "alpha" differs from its folder "other"`},
	}
	formats := map[string]func(files []file) ([]*Skill, error){
		"dir": func(files []file) ([]*Skill, error) { return FromDir(writeDir(t, files), small) },
		"zip": func(files []file) ([]*Skill, error) { return FromArchive("s.zip", zipOf(t, files), small) },
		"tgz": func(files []file) ([]*Skill, error) { return FromArchive("s.tar.gz", tgzOf(t, files), small) },
	}
	for fname, imp := range formats {
		t.Run(fname, func(t *testing.T) {
			got, err := imp(good)
			if err != nil {
				t.Fatalf("importing two good skills: %v", err)
			}
			if len(got) != 2 || got[0].Name != "alpha" || string(got[0].Files["ref/a.txt"]) != "ref" || got[1].Name != "beta" {
				t.Fatalf("want alpha (with ref/a.txt) and beta, got %d skills", len(got))
			}
			for bname, b := range bad {
				_, err := imp(b.files)
				if err == nil || !strings.Contains(err.Error(), b.want) || !errors.Is(err, ErrInvalid) {
					t.Errorf("%s: error %v, want an ErrInvalid saying %q", bname, err, b.want)
				}
			}
		})
	}
	// Path traversal cannot be written into a folder; archives carry it.
	for _, name := range []string{"../evil/SKILL.md", "alpha/../../evil.txt", "/abs/SKILL.md"} {
		files := append(good[:1:1], file{name, mdA, false})
		if _, err := FromZip("t.zip", zipOf(t, files), small); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("zip with %q: error %v, want the path refused", name, err)
		}
		if _, err := FromTarGz("t.tgz", tgzOf(t, files), small); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("tar.gz with %q: error %v, want the path refused", name, err)
		}
	}
	// A single skill at the top of the archive.
	got, err := FromArchive("one.zip", zipOf(t, []file{{"SKILL.md", mdA, false}}), small)
	if err != nil || len(got) != 1 || got[0].Name != "alpha" {
		t.Errorf("a skill at the archive's top: %v", err)
	}
	if _, err := FromArchive("x.rar", []byte("Rar!"), small); err == nil {
		t.Error("an unknown archive should be refused")
	}
}

func TestFromURL(t *testing.T) {
	archive := zipOf(t, []file{{"alpha/SKILL.md", mdA, false}})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/skills.zip":
			w.Write(archive)
		case "/away.zip":
			http.Redirect(w, r, "http://example.invalid/skills.zip", http.StatusFound)
		case "/huge.zip":
			w.Write(bytes.Repeat([]byte("x"), 5000))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	lim := Limits{MaxTotalBytes: 4000}
	got, err := FromURL(ctx, srv.Client(), srv.URL+"/skills.zip", lim)
	if err != nil || len(got) != 1 || got[0].Name != "alpha" {
		t.Fatalf("importing over https: %v", err)
	}
	for path, want := range map[string]string{"/huge.zip": "more than the limit", "/missing.zip": "404", "/away.zip": "only https"} {
		if _, err := FromURL(ctx, srv.Client(), srv.URL+path, lim); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
	if _, err := FromURL(ctx, srv.Client(), strings.Replace(srv.URL, "https", "http", 1)+"/skills.zip", lim); err == nil || !strings.Contains(err.Error(), "only https") {
		t.Errorf("plain http: error %v, want it refused", err)
	}
}
