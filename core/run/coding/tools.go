package coding

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core/tool"
)

// The worktree tools: a model agent's hands in a coding step. Each works
// inside the step's worktree only (tool.Request.Dir), through os.Root, so
// no path, .. or symbolic link reaches outside it; the engine offers them
// in coding steps alone.
const (
	ToolList  = "worktree_list"
	ToolRead  = "worktree_read"
	ToolWrite = "worktree_write"
)

// IsTool reports whether name is one of the worktree tools.
func IsTool(name string) bool { return slices.Contains([]string{ToolList, ToolRead, ToolWrite}, name) }

// Bounds of the tools.
const (
	MaxReadBytes  = 256 << 10
	MaxWriteBytes = 1 << 20
	MaxListed     = 2000
)

// ListIn is worktree_list's input.
type ListIn struct {
	Dir string `json:"dir,omitempty" jsonschema:"a folder of the repository, relative to its root; empty for the root"`
}

// ListOut lists files, folders ending in /.
type ListOut struct {
	Entries   []string `json:"entries"`
	Truncated bool     `json:"truncated,omitempty"`
}

// ReadIn is worktree_read's input.
type ReadIn struct {
	Path string `json:"path" jsonschema:"the file's path relative to the repository's root"`
}

// ReadOut is a file's text.
type ReadOut struct {
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty"`
}

// WriteIn is worktree_write's input.
type WriteIn struct {
	Path    string `json:"path" jsonschema:"the file's path relative to the repository's root; folders are made"`
	Content string `json:"content" jsonschema:"the file's whole new content"`
	Delete  bool   `json:"delete,omitempty" jsonschema:"true to delete the file instead"`
}

// WriteOut says what was written.
type WriteOut struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// RegisterTools adds the worktree tools to r.
func RegisterTools(r *tool.Registry) error {
	if err := tool.Register(r, tool.Def{
		Name:        ToolList,
		Description: "List the files and folders of a folder of the repository this coding step works in (folders end in /; .git is left out).",
		Risk:        tool.RiskLow, Tier: tool.TierServer,
	}, list); err != nil {
		return err
	}
	if err := tool.Register(r, tool.Def{
		Name:        ToolRead,
		Description: "Read a text file of the repository this coding step works in.",
		Risk:        tool.RiskLow, Tier: tool.TierServer,
	}, read); err != nil {
		return err
	}
	return tool.Register(r, tool.Def{
		Name: ToolWrite,
		Description: "Write (create or replace) or delete a file in the repository this coding step works in. " +
			"Your changes are committed on the step's branch when you answer, then checked.",
		Risk: tool.RiskLow, Tier: tool.TierServer,
	}, write)
}

// root opens the call's worktree; a path is cleaned and must stay in it.
func root(req *tool.Request) (*os.Root, error) {
	if req.Dir == "" {
		return nil, errors.New("this tool works in a coding step's repository only")
	}
	return os.OpenRoot(req.Dir)
}

func clean(p string) (string, error) {
	p = path.Clean("/" + strings.TrimSpace(p))[1:]
	if p == "" {
		p = "."
	}
	if p == ".git" || strings.HasPrefix(p, ".git/") {
		return "", fmt.Errorf("path %q: the repository's .git is not the step's to touch", p)
	}
	return p, nil
}

func list(_ context.Context, req *tool.Request, in ListIn) (ListOut, error) {
	r, err := root(req)
	if err != nil {
		return ListOut{}, err
	}
	defer r.Close()
	dir, err := clean(in.Dir)
	if err != nil {
		return ListOut{}, err
	}
	out := ListOut{Entries: []string{}}
	err = fs.WalkDir(r.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if len(out.Entries) >= MaxListed {
			out.Truncated = true
			return fs.SkipAll
		}
		if d.IsDir() {
			out.Entries = append(out.Entries, p+"/")
		} else {
			out.Entries = append(out.Entries, p)
		}
		return nil
	})
	if err != nil {
		return ListOut{}, fmt.Errorf("listing %s: %w", dir, err)
	}
	return out, nil
}

func read(_ context.Context, req *tool.Request, in ReadIn) (ReadOut, error) {
	r, err := root(req)
	if err != nil {
		return ReadOut{}, err
	}
	defer r.Close()
	p, err := clean(in.Path)
	if err != nil {
		return ReadOut{}, err
	}
	f, err := r.Open(p)
	if err != nil {
		return ReadOut{}, fmt.Errorf("reading %s: %w", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return ReadOut{}, fmt.Errorf("reading %s: %w", p, err)
	}
	out := ReadOut{Content: string(b)}
	if len(b) > MaxReadBytes {
		out.Content, out.Truncated = string(b[:MaxReadBytes]), true
	}
	return out, nil
}

func write(_ context.Context, req *tool.Request, in WriteIn) (WriteOut, error) {
	r, err := root(req)
	if err != nil {
		return WriteOut{}, err
	}
	defer r.Close()
	p, err := clean(in.Path)
	if err != nil {
		return WriteOut{}, err
	}
	if p == "." {
		return WriteOut{}, errors.New("path is required")
	}
	if in.Delete {
		if err := r.Remove(p); err != nil {
			return WriteOut{}, fmt.Errorf("deleting %s: %w", p, err)
		}
		return WriteOut{Path: p}, nil
	}
	if len(in.Content) > MaxWriteBytes {
		return WriteOut{}, fmt.Errorf("content: %d bytes; at most %d", len(in.Content), MaxWriteBytes)
	}
	if d := path.Dir(p); d != "." {
		if err := r.MkdirAll(d, 0o755); err != nil {
			return WriteOut{}, fmt.Errorf("making %s: %w", d, err)
		}
	}
	if err := r.WriteFile(p, []byte(in.Content), 0o644); err != nil {
		return WriteOut{}, fmt.Errorf("writing %s: %w", p, err)
	}
	return WriteOut{Path: p, Bytes: len(in.Content)}, nil
}
