package githubtest

import (
	"context"
	"errors"
	"fmt"
)

// backend is where a repository's branches and files live: maps in memory
// (memBackend) or a bare git repository (gitBackend). The REST handlers
// hold Server.mu around every call.
type backend interface {
	// heads maps each branch to its head commit.
	heads(ctx context.Context) (map[string]string, error)
	// createBranch starts a branch at a commit and returns its full sha;
	// errExists if the branch exists, errNotFound if the commit does not.
	createBranch(ctx context.Context, name, commit string) (string, error)
	// deleteBranch: errNotFound if there is no such branch.
	deleteBranch(ctx context.Context, name string) error
	// file reads a file at ref (a branch, tag or commit) and the sha that
	// names its version; errNotFound if it is not there.
	file(ctx context.Context, ref, path string) (text, blob string, err error)
	// putFile commits one file to a branch; errNotFound if a git branch
	// does not exist.
	putFile(ctx context.Context, c fileChange) (commit, blob string, err error)
	// merge merges a pull request's head into its base and returns the
	// base's new head; errConflict if they do not merge cleanly.
	merge(ctx context.Context, pr *PR, author string) (string, error)
}

// fileChange is one file committed through the contents API.
type fileChange struct {
	Branch, Path, Text string
	Message, Author    string
}

var (
	errNotFound = errors.New("not found")
	errExists   = errors.New("already exists")
	errConflict = errors.New("merge conflict")
)

// memBackend keeps a Repo's Branches and Files: every branch has the same
// files, and shas are made up from what they name.
type memBackend struct{ r *Repo }

func (m memBackend) heads(context.Context) (map[string]string, error) { return m.r.Branches, nil }

func (m memBackend) createBranch(_ context.Context, name, commit string) (string, error) {
	if _, ok := m.r.Branches[name]; ok {
		return "", errExists
	}
	m.r.Branches[name] = commit
	return commit, nil
}

func (m memBackend) deleteBranch(_ context.Context, name string) error {
	if _, ok := m.r.Branches[name]; !ok {
		return errNotFound
	}
	delete(m.r.Branches, name)
	return nil
}

func (m memBackend) file(_ context.Context, _, path string) (string, string, error) {
	text, ok := m.r.Files[path]
	if !ok {
		return "", "", errNotFound
	}
	return text, sha(text), nil
}

func (m memBackend) putFile(_ context.Context, c fileChange) (string, string, error) {
	m.r.Files[c.Path] = c.Text
	commit := sha(c.Author + c.Path + c.Text)
	m.r.Branches[c.Branch] = commit
	return commit, sha(c.Text), nil
}

func (m memBackend) merge(_ context.Context, pr *PR, _ string) (string, error) {
	merged := sha(fmt.Sprint(pr.Number, pr.Title))
	m.r.Branches[pr.Base] = merged
	return merged, nil
}
