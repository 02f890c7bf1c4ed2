// Package github is the GitHub tools (github__*), on go-github: read a
// file, list and open pull requests, comment, create a branch, commit a
// change, merge (high risk) and delete a branch (high risk). Each call acts
// with the account resolved from the conversation (package connection):
// the speaking person's own GitHub connection, else the workspace's.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v84/github"

	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Accounts hands a call the account it acts with (connection.Accounts).
type Accounts = connection.Accounts

// MaxFileBytes bounds the file github__read_file returns.
const MaxFileBytes = 64 << 10

// tools binds the handlers to the accounts.
type tools struct{ acc Accounts }

func (t tools) client(ctx context.Context, req *tool.Request) (*gh.Client, error) {
	hc, _, err := t.acc.ClientFor(ctx, store.ProviderGitHub, req)
	if err != nil {
		return nil, err
	}
	return connection.GitHubClient(hc, t.acc.APIURL(store.ProviderGitHub))
}

// RepoArg names a repository as "owner/name"; every tool's input embeds it.
type RepoArg struct {
	Repo string `json:"repo" jsonschema:"the repository as owner/name, e.g. octocat/hello-world"`
}

func (r RepoArg) split() (string, string, error) {
	owner, name, ok := strings.Cut(r.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("repo %q must be owner/name", r.Repo)
	}
	return owner, name, nil
}

// apiError says what GitHub answered, for the model.
func apiError(doing string, err error) error {
	var ge *gh.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil {
		return fmt.Errorf("%s: GitHub answered %d: %s", doing, ge.Response.StatusCode, ge.Message)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// Register adds the GitHub tools to reg.
func Register(reg *tool.Registry, acc Accounts) error {
	if acc == nil {
		return errors.New("github: Accounts is required")
	}
	t := tools{acc: acc}
	return errors.Join(
		tool.Register(reg, tool.Def{
			Name:        "github__read_file",
			Description: "Read a text file from a GitHub repository, at a branch, tag or commit (default: the default branch). Acts with the GitHub account connected by the person speaking, else the workspace's.",
			Risk:        tool.RiskLow, ReadOnly: true,
		}, t.readFile),
		tool.Register(reg, tool.Def{
			Name:        "github__list_pull_requests",
			Description: "List pull requests of a GitHub repository, newest first.",
			Risk:        tool.RiskLow, ReadOnly: true,
		}, t.listPullRequests),
		tool.Register(reg, tool.Def{
			Name:        "github__open_pull_request",
			Description: "Open a pull request from a head branch into a base branch.",
			Risk:        tool.RiskMedium,
		}, t.openPullRequest),
		tool.Register(reg, tool.Def{
			Name:        "github__comment",
			Description: "Comment on a pull request or an issue.",
			Risk:        tool.RiskMedium,
		}, t.comment),
		tool.Register(reg, tool.Def{
			Name:        "github__create_branch",
			Description: "Create a branch from another branch (default: the repository's default branch).",
			Risk:        tool.RiskMedium,
		}, t.createBranch),
		tool.Register(reg, tool.Def{
			Name:        "github__commit_change",
			Description: "Commit a new version of one file (its whole text) to a branch, creating the file if it does not exist.",
			Risk:        tool.RiskMedium,
		}, t.commitChange),
		tool.Register(reg, tool.Def{
			Name:        "github__merge_pull_request",
			Description: "Merge a pull request (merge, squash or rebase).",
			Risk:        tool.RiskHigh,
		}, t.mergePullRequest),
		tool.Register(reg, tool.Def{
			Name:        "github__delete_branch",
			Description: "Delete a branch.",
			Risk:        tool.RiskHigh,
		}, t.deleteBranch),
	)
}

// ---- read_file ----

type ReadFileIn struct {
	RepoArg
	Path string `json:"path" jsonschema:"the file's path in the repository"`
	Ref  string `json:"ref,omitempty" jsonschema:"a branch, tag or commit sha; default: the default branch"`
}

type ReadFileOut struct {
	Path    string `json:"path"`
	SHA     string `json:"sha"`
	Size    int    `json:"size"`
	Content string `json:"content"`
	URL     string `json:"url,omitempty"`
}

func (t tools) readFile(ctx context.Context, req *tool.Request, in ReadFileIn) (ReadFileOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return ReadFileOut{}, err
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return ReadFileOut{}, err
	}
	file, dir, _, err := c.Repositories.GetContents(ctx, owner, name, in.Path, &gh.RepositoryContentGetOptions{Ref: in.Ref})
	if err != nil {
		return ReadFileOut{}, apiError("reading "+in.Path+" in "+in.Repo, err)
	}
	if file == nil {
		return ReadFileOut{}, fmt.Errorf("%s in %s is a directory of %d entries, not a file", in.Path, in.Repo, len(dir))
	}
	if file.GetSize() > MaxFileBytes {
		return ReadFileOut{}, fmt.Errorf("%s is %d bytes, more than the %d this tool reads", in.Path, file.GetSize(), MaxFileBytes)
	}
	text, err := file.GetContent()
	if err != nil {
		return ReadFileOut{}, fmt.Errorf("decoding %s: %w", in.Path, err)
	}
	if !utf8.ValidString(text) {
		return ReadFileOut{}, fmt.Errorf("%s is not a text file", in.Path)
	}
	return ReadFileOut{Path: file.GetPath(), SHA: file.GetSHA(), Size: file.GetSize(), Content: text, URL: file.GetHTMLURL()}, nil
}

// ---- list_pull_requests ----

type ListPullRequestsIn struct {
	RepoArg
	State string `json:"state,omitempty" jsonschema:"open (default), closed or all"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many, 1 to 100 (default 30)"`
}

type PullRequest struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	State  string `json:"state"`
	Draft  bool   `json:"draft,omitempty"`
	Author string `json:"author"`
	Head   string `json:"head"`
	Base   string `json:"base"`
	URL    string `json:"url"`
}

type ListPullRequestsOut struct {
	PullRequests []PullRequest `json:"pull_requests"`
}

func (t tools) listPullRequests(ctx context.Context, req *tool.Request, in ListPullRequestsIn) (ListPullRequestsOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return ListPullRequestsOut{}, err
	}
	switch in.State {
	case "":
		in.State = "open"
	case "open", "closed", "all":
	default:
		return ListPullRequestsOut{}, fmt.Errorf("state %q must be open, closed or all", in.State)
	}
	if in.Limit <= 0 || in.Limit > 100 {
		in.Limit = 30
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return ListPullRequestsOut{}, err
	}
	prs, _, err := c.PullRequests.List(ctx, owner, name, &gh.PullRequestListOptions{State: in.State, ListOptions: gh.ListOptions{PerPage: in.Limit}})
	if err != nil {
		return ListPullRequestsOut{}, apiError("listing the pull requests of "+in.Repo, err)
	}
	out := ListPullRequestsOut{PullRequests: []PullRequest{}}
	for _, pr := range prs {
		if len(out.PullRequests) == in.Limit {
			break
		}
		out.PullRequests = append(out.PullRequests, PullRequest{
			Number: pr.GetNumber(), Title: pr.GetTitle(), State: pr.GetState(), Draft: pr.GetDraft(),
			Author: pr.GetUser().GetLogin(), Head: pr.GetHead().GetRef(), Base: pr.GetBase().GetRef(), URL: pr.GetHTMLURL(),
		})
	}
	return out, nil
}

// ---- open_pull_request ----

type OpenPullRequestIn struct {
	RepoArg
	Title string `json:"title"`
	Head  string `json:"head" jsonschema:"the branch with the changes"`
	Base  string `json:"base" jsonschema:"the branch to merge into"`
	Body  string `json:"body,omitempty"`
	Draft bool   `json:"draft,omitempty"`
}

type OpenPullRequestOut struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
}

func (t tools) openPullRequest(ctx context.Context, req *tool.Request, in OpenPullRequestIn) (OpenPullRequestOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return OpenPullRequestOut{}, err
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return OpenPullRequestOut{}, err
	}
	pr, _, err := c.PullRequests.Create(ctx, owner, name, &gh.NewPullRequest{
		Title: gh.Ptr(in.Title), Head: gh.Ptr(in.Head), Base: gh.Ptr(in.Base), Body: gh.Ptr(in.Body), Draft: gh.Ptr(in.Draft),
	})
	if err != nil {
		return OpenPullRequestOut{}, apiError("opening a pull request in "+in.Repo, err)
	}
	return OpenPullRequestOut{Number: pr.GetNumber(), URL: pr.GetHTMLURL()}, nil
}

// ---- comment ----

type CommentIn struct {
	RepoArg
	Number int    `json:"number" jsonschema:"the pull request's or issue's number"`
	Body   string `json:"body"`
}

type CommentOut struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
}

func (t tools) comment(ctx context.Context, req *tool.Request, in CommentIn) (CommentOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return CommentOut{}, err
	}
	if strings.TrimSpace(in.Body) == "" {
		return CommentOut{}, errors.New("the comment's body is empty")
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return CommentOut{}, err
	}
	cm, _, err := c.Issues.CreateComment(ctx, owner, name, in.Number, &gh.IssueComment{Body: gh.Ptr(in.Body)})
	if err != nil {
		return CommentOut{}, apiError(fmt.Sprintf("commenting on %s#%d", in.Repo, in.Number), err)
	}
	return CommentOut{ID: cm.GetID(), URL: cm.GetHTMLURL()}, nil
}

// ---- create_branch ----

type CreateBranchIn struct {
	RepoArg
	Branch string `json:"branch" jsonschema:"the new branch's name"`
	From   string `json:"from,omitempty" jsonschema:"the branch to start from; default: the repository's default branch"`
}

type BranchOut struct {
	Branch string `json:"branch"`
	SHA    string `json:"sha"`
}

func (t tools) createBranch(ctx context.Context, req *tool.Request, in CreateBranchIn) (BranchOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return BranchOut{}, err
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return BranchOut{}, err
	}
	from := in.From
	if from == "" {
		repo, _, err := c.Repositories.Get(ctx, owner, name)
		if err != nil {
			return BranchOut{}, apiError("reading "+in.Repo, err)
		}
		from = repo.GetDefaultBranch()
	}
	base, _, err := c.Git.GetRef(ctx, owner, name, "heads/"+from)
	if err != nil {
		return BranchOut{}, apiError("reading branch "+from+" of "+in.Repo, err)
	}
	ref, _, err := c.Git.CreateRef(ctx, owner, name, gh.CreateRef{Ref: "refs/heads/" + in.Branch, SHA: base.GetObject().GetSHA()})
	if err != nil {
		return BranchOut{}, apiError("creating branch "+in.Branch+" in "+in.Repo, err)
	}
	return BranchOut{Branch: in.Branch, SHA: ref.GetObject().GetSHA()}, nil
}

// ---- commit_change ----

type CommitChangeIn struct {
	RepoArg
	Branch  string `json:"branch"`
	Path    string `json:"path"`
	Content string `json:"content" jsonschema:"the file's whole new text"`
	Message string `json:"message" jsonschema:"the commit message"`
}

type CommitChangeOut struct {
	Commit string `json:"commit"`
	URL    string `json:"url,omitempty"`
}

func (t tools) commitChange(ctx context.Context, req *tool.Request, in CommitChangeIn) (CommitChangeOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return CommitChangeOut{}, err
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return CommitChangeOut{}, err
	}
	opts := &gh.RepositoryContentFileOptions{Message: gh.Ptr(in.Message), Content: []byte(in.Content), Branch: gh.Ptr(in.Branch)}
	// Updating a file takes the sha of the version it replaces.
	cur, _, resp, err := c.Repositories.GetContents(ctx, owner, name, in.Path, &gh.RepositoryContentGetOptions{Ref: in.Branch})
	switch {
	case err == nil && cur != nil:
		opts.SHA = gh.Ptr(cur.GetSHA())
	case err == nil:
		return CommitChangeOut{}, fmt.Errorf("%s in %s is a directory", in.Path, in.Repo)
	case resp == nil || resp.StatusCode != http.StatusNotFound:
		return CommitChangeOut{}, apiError("reading "+in.Path+" on "+in.Branch, err)
	}
	res, _, err := c.Repositories.CreateFile(ctx, owner, name, in.Path, opts)
	if err != nil {
		return CommitChangeOut{}, apiError("committing "+in.Path+" to "+in.Branch+" of "+in.Repo, err)
	}
	return CommitChangeOut{Commit: res.Commit.GetSHA(), URL: res.Commit.GetHTMLURL()}, nil
}

// ---- merge_pull_request ----

type MergeIn struct {
	RepoArg
	Number      int    `json:"number"`
	Method      string `json:"method,omitempty" jsonschema:"merge (default), squash or rebase"`
	CommitTitle string `json:"commit_title,omitempty"`
}

type MergeOut struct {
	Merged  bool   `json:"merged"`
	SHA     string `json:"sha"`
	Message string `json:"message"`
}

func (t tools) mergePullRequest(ctx context.Context, req *tool.Request, in MergeIn) (MergeOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return MergeOut{}, err
	}
	switch in.Method {
	case "", "merge", "squash", "rebase":
	default:
		return MergeOut{}, fmt.Errorf("method %q must be merge, squash or rebase", in.Method)
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return MergeOut{}, err
	}
	res, _, err := c.PullRequests.Merge(ctx, owner, name, in.Number, "", &gh.PullRequestOptions{MergeMethod: in.Method, CommitTitle: in.CommitTitle})
	if err != nil {
		return MergeOut{}, apiError(fmt.Sprintf("merging %s#%d", in.Repo, in.Number), err)
	}
	return MergeOut{Merged: res.GetMerged(), SHA: res.GetSHA(), Message: res.GetMessage()}, nil
}

// ---- delete_branch ----

type DeleteBranchIn struct {
	RepoArg
	Branch string `json:"branch"`
}

type DeleteBranchOut struct {
	Deleted string `json:"deleted"`
}

func (t tools) deleteBranch(ctx context.Context, req *tool.Request, in DeleteBranchIn) (DeleteBranchOut, error) {
	owner, name, err := in.split()
	if err != nil {
		return DeleteBranchOut{}, err
	}
	c, err := t.client(ctx, req)
	if err != nil {
		return DeleteBranchOut{}, err
	}
	if _, err := c.Git.DeleteRef(ctx, owner, name, "heads/"+in.Branch); err != nil {
		return DeleteBranchOut{}, apiError("deleting branch "+in.Branch+" of "+in.Repo, err)
	}
	return DeleteBranchOut{Deleted: in.Branch}, nil
}
