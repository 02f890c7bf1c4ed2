package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v84/github"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Host is GitHub as runs' coding steps reach it (core.CodeHost): a
// repository's clone URL, default branch and a token for git over HTTPS,
// and pull requests, each with the account a call resolves to (the
// person's own connection, else the workspace's).
type Host struct{ acc Accounts }

var _ core.CodeHost = Host{}

// NewHost returns the host acting with acc's accounts.
func NewHost(acc Accounts) Host { return Host{acc: acc} }

func (h Host) client(ctx context.Context, req *tool.Request) (*gh.Client, string, error) {
	hc, _, err := h.acc.ClientFor(ctx, store.ProviderGitHub, req)
	if err != nil {
		return nil, "", err
	}
	// The client sends the connection's token (refreshed when due); git
	// needs it too, so it is read from the same source.
	t, ok := hc.Transport.(*oauth2.Transport)
	if !ok || t.Source == nil {
		return nil, "", errors.New("the GitHub connection's client carries no token")
	}
	tok, err := t.Source.Token()
	if err != nil {
		return nil, "", fmt.Errorf("reading the GitHub connection's token: %w", err)
	}
	c, err := connection.GitHubClient(hc, h.acc.APIURL(store.ProviderGitHub))
	return c, tok.AccessToken, err
}

// Repo reads owner/name: where git fetches it and its default branch.
func (h Host) Repo(ctx context.Context, req *tool.Request, fullName string) (*core.HostedRepo, error) {
	owner, name, err := RepoArg{Repo: fullName}.split()
	if err != nil {
		return nil, err
	}
	c, token, err := h.client(ctx, req)
	if err != nil {
		return nil, err
	}
	r, _, err := c.Repositories.Get(ctx, owner, name)
	if err != nil {
		return nil, apiError("reading the repository "+fullName, err)
	}
	if r.GetCloneURL() == "" {
		return nil, fmt.Errorf("GitHub gave no clone URL for %s", fullName)
	}
	if !strings.HasPrefix(r.GetCloneURL(), "https://") && !strings.HasPrefix(r.GetCloneURL(), "http://") {
		return nil, fmt.Errorf("GitHub gave %s a clone URL that is not http(s): %q", fullName, r.GetCloneURL())
	}
	return &core.HostedRepo{CloneURL: r.GetCloneURL(), DefaultBranch: r.GetDefaultBranch(), Token: token}, nil
}

// OpenPullRequest opens a pull request of spec.Head into spec.Base.
func (h Host) OpenPullRequest(ctx context.Context, req *tool.Request, fullName string, spec core.PullRequestSpec) (*core.PullRequest, error) {
	owner, name, err := RepoArg{Repo: fullName}.split()
	if err != nil {
		return nil, err
	}
	c, _, err := h.client(ctx, req)
	if err != nil {
		return nil, err
	}
	pr, _, err := c.PullRequests.Create(ctx, owner, name, &gh.NewPullRequest{
		Title: gh.Ptr(spec.Title), Head: gh.Ptr(spec.Head), Base: gh.Ptr(spec.Base), Body: gh.Ptr(spec.Body),
	})
	if err != nil {
		return nil, apiError("opening a pull request in "+fullName, err)
	}
	return &core.PullRequest{Number: pr.GetNumber(), URL: pr.GetHTMLURL()}, nil
}
