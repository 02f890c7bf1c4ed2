package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
)

// The history's and the artifacts' rules: titles and names are trimmed and
// bounded, colours are #rrggbb, kinds and sorts are known, and searches get
// their needle here so both drivers match alike.

// SearchNeedle is what a substring search looks for: q trimmed and
// lowercased, matched against lowercased text by position (SQLite instr,
// Postgres strpos), so no character of q is a wildcard. Empty when q is
// blank: no filter.
func SearchNeedle(q string) string { return strings.ToLower(strings.TrimSpace(q)) }

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

func checkTitle(what, title string) (string, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return "", invalidf("%s: empty title", what)
	case len([]rune(title)) > MaxTitleChars:
		return "", invalidf("%s: title has %d characters, more than %d", what, len([]rune(title)), MaxTitleChars)
	}
	return title, nil
}

func checkColor(what, c string) (string, error) {
	c = strings.TrimSpace(c)
	if c != "" && !colorRE.MatchString(c) {
		return "", invalidf("%s: color %q is not #rrggbb", what, c)
	}
	return strings.ToLower(c), nil
}

func (q checked) ConversationSearch(ctx context.Context, p *ConversationSearchParams) ([]*ConversationListing, error) {
	if p == nil {
		return nil, invalidf("searching conversations: params are nil")
	}
	c := *p
	switch {
	case c.Sort == "":
		c.Sort = SortActivity
	case !c.Sort.Valid():
		return nil, invalidf("searching conversations: sort %q is not activity, created or title", c.Sort)
	}
	if c.Offset < 0 {
		return nil, invalidf("searching conversations: offset %d is negative", c.Offset)
	}
	if c.FolderID != nil && c.Unfiled {
		return nil, invalidf("searching conversations: FolderID and Unfiled together")
	}
	c.Limit, c.Needle = limitOr(c.Limit, DefaultListLimit), SearchNeedle(c.Query)
	if !c.Visibility.All && len(c.Visibility.Workspaces) == 0 {
		return nil, nil
	}
	return q.Queries.ConversationSearch(ctx, &c)
}

func (q checked) ConversationFile(ctx context.Context, p *ConversationFileParams) (*ConversationListing, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("filing a conversation: ID is required")
	}
	c := *p
	if c.Title != nil {
		t, err := checkTitle(fmt.Sprintf("renaming conversation %s", c.ID), *c.Title)
		if err != nil {
			return nil, err
		}
		c.Title = &t
	}
	if c.FolderID != nil && c.Unfile {
		return nil, invalidf("filing conversation %s: FolderID and Unfile together", c.ID)
	}
	c.Now = q.at(c.Now)
	return q.Queries.ConversationFile(ctx, &c)
}

func (q checked) ConversationDelete(ctx context.Context, p *ConversationDeleteParams) error {
	if p == nil || p.ID == uuid.Nil {
		return invalidf("deleting a conversation: ID is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ConversationDelete(ctx, &c)
}

func (q checked) FolderCreate(ctx context.Context, p *FolderCreateParams) (*Folder, error) {
	if p == nil {
		return nil, invalidf("creating a folder: params are nil")
	}
	c := *p
	var err error
	if c.Name, err = checkTitle("creating a folder", c.Name); err != nil {
		return nil, err
	}
	if c.Color, err = checkColor("creating folder "+c.Name, c.Color); err != nil {
		return nil, err
	}
	c.ID, c.Now = newID(), q.at(c.Now)
	return q.Queries.FolderCreate(ctx, &c)
}

func (q checked) FolderUpdate(ctx context.Context, p *FolderUpdateParams) (*Folder, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("changing a folder: ID is required")
	}
	c := *p
	if c.Name != nil {
		n, err := checkTitle(fmt.Sprintf("renaming folder %s", c.ID), *c.Name)
		if err != nil {
			return nil, err
		}
		c.Name = &n
	}
	if c.Color != nil {
		col, err := checkColor(fmt.Sprintf("recolouring folder %s", c.ID), *c.Color)
		if err != nil {
			return nil, err
		}
		c.Color = &col
	}
	c.Now = q.at(c.Now)
	return q.Queries.FolderUpdate(ctx, &c)
}

func (q checked) FolderList(ctx context.Context, v Visibility) ([]*Folder, error) {
	if !v.All && len(v.Workspaces) == 0 {
		return nil, nil
	}
	return q.Queries.FolderList(ctx, v)
}

func (q checked) ArtifactCreate(ctx context.Context, p *ArtifactCreateParams) (*Artifact, error) {
	if p == nil || p.ConversationID == uuid.Nil {
		return nil, invalidf("creating an artifact: ConversationID is required")
	}
	c := *p
	var err error
	if !c.Kind.Valid() {
		return nil, invalidf("creating an artifact: kind %q is not document, page or code", c.Kind)
	}
	if c.Title, err = checkTitle("creating an artifact", c.Title); err != nil {
		return nil, err
	}
	if len(c.Content) > MaxArtifactBytes {
		return nil, invalidf("creating artifact %q: content has %d bytes, more than %d", c.Title, len(c.Content), MaxArtifactBytes)
	}
	c.Language = strings.TrimSpace(c.Language)
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	c.Now = q.at(c.Now)
	return q.Queries.ArtifactCreate(ctx, &c)
}

func (q checked) ArtifactUpdate(ctx context.Context, p *ArtifactUpdateParams) (*Artifact, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("updating an artifact: ID is required")
	}
	c := *p
	if c.Title != nil {
		t, err := checkTitle(fmt.Sprintf("updating artifact %s", c.ID), *c.Title)
		if err != nil {
			return nil, err
		}
		c.Title = &t
	}
	if c.Language != nil {
		l := strings.TrimSpace(*c.Language)
		c.Language = &l
	}
	if len(c.Content) > MaxArtifactBytes {
		return nil, invalidf("updating artifact %s: content has %d bytes, more than %d", c.ID, len(c.Content), MaxArtifactBytes)
	}
	if c.BaseVersion < 0 {
		return nil, invalidf("updating artifact %s: BaseVersion %d is negative", c.ID, c.BaseVersion)
	}
	c.Now = q.at(c.Now)
	return q.Queries.ArtifactUpdate(ctx, &c)
}

func (q checked) ArtifactVersionGet(ctx context.Context, p *ArtifactVersionParams) (*ArtifactVersion, error) {
	if p == nil || p.ID == uuid.Nil || p.Version < 1 {
		return nil, invalidf("reading an artifact version: ID and a Version of 1 or more are required")
	}
	return q.Queries.ArtifactVersionGet(ctx, p)
}

func (q checked) ArtifactList(ctx context.Context, p *ArtifactListParams) ([]*Artifact, error) {
	if p == nil {
		return nil, invalidf("listing artifacts: params are nil")
	}
	c := *p
	if c.Kind != "" && !c.Kind.Valid() {
		return nil, invalidf("listing artifacts: kind %q is not document, page or code", c.Kind)
	}
	c.Limit, c.Needle = limitOr(c.Limit, DefaultListLimit), SearchNeedle(c.Query)
	if !c.Visibility.All && len(c.Visibility.Workspaces) == 0 {
		return nil, nil
	}
	return q.Queries.ArtifactList(ctx, &c)
}

func (q checked) ArtifactComment(ctx context.Context, p *ArtifactCommentParams) (*ArtifactComment, error) {
	if p == nil || p.ArtifactID == uuid.Nil {
		return nil, invalidf("commenting on an artifact: ArtifactID is required")
	}
	c := *p
	c.Text = strings.TrimSpace(c.Text)
	switch {
	case c.Text == "":
		return nil, invalidf("commenting on artifact %s: empty text", c.ArtifactID)
	case len([]rune(c.Text)) > MaxCommentChars:
		return nil, invalidf("commenting on artifact %s: text has %d characters, more than %d", c.ArtifactID, len([]rune(c.Text)), MaxCommentChars)
	case c.Version < 0:
		return nil, invalidf("commenting on artifact %s: version %d is negative", c.ArtifactID, c.Version)
	}
	c.Now = q.at(c.Now)
	return q.Queries.ArtifactComment(ctx, &c)
}
