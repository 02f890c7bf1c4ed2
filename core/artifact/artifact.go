// Package artifact is what agents make for people to keep: a document, a
// page or code, attached to the conversation and versioned. The tools
// artifact_create, artifact_update and artifact_comment write it (see
// store.ArtifactQueries); create and update hand the new version to the
// platform as a file, with a link to the page when the public address is
// known. The file travels as the tool result's attachment, so the delivery
// stage posts it exactly once however often delivery is retried.
package artifact

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// The tools' names.
const (
	ToolCreate  = "artifact_create"
	ToolUpdate  = "artifact_update"
	ToolComment = "artifact_comment"
)

// Options configures the artifacts.
type Options struct {
	Store store.Store
	// PublicURL is where browsers reach this server
	// (SWITCHBOARD_PUBLIC_URL); a posted artifact links to its page there.
	// Empty: no link.
	PublicURL string
	Now       func() time.Time
}

func (o *Options) validate() error {
	if o.Store == nil {
		return errors.New("artifact: Options.Store is required")
	}
	if o.PublicURL != "" {
		u, err := url.Parse(o.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("artifact: Options.PublicURL %q is not an http(s) address", o.PublicURL)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Artifacts runs the tools.
type Artifacts struct {
	st   store.Store
	base string
	now  func() time.Time
}

// New validates opts.
func New(opts Options) (*Artifacts, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Artifacts{st: opts.Store, base: strings.TrimRight(opts.PublicURL, "/"), now: opts.Now}, nil
}

// Link is the page of an artifact (the console's artifacts view), ""
// without a public address.
func (a *Artifacts) Link(id uuid.UUID) string {
	if a.base == "" {
		return ""
	}
	return a.base + "/?view=artifacts&artifact=" + id.String()
}

// CreateIn is artifact_create's input.
type CreateIn struct {
	Kind     string `json:"kind" jsonschema:"document (Markdown prose), page (a web page in HTML) or code"`
	Title    string `json:"title" jsonschema:"a short title; for code, the file name"`
	Language string `json:"language,omitempty" jsonschema:"for code: the language (go, python, ts...)"`
	Content  string `json:"content" jsonschema:"the whole content"`
}

// UpdateIn is artifact_update's input.
type UpdateIn struct {
	ID          string `json:"id" jsonschema:"the artifact's id, from artifact_create (or its title)"`
	Content     string `json:"content" jsonschema:"the whole new content (not a patch)"`
	Title       string `json:"title,omitempty" jsonschema:"a new title; empty keeps it"`
	BaseVersion int    `json:"base_version,omitempty" jsonschema:"the version you edited; the edit is refused if another came first"`
}

// CommentIn is artifact_comment's input.
type CommentIn struct {
	ID      string `json:"id" jsonschema:"the artifact's id (or its title)"`
	Text    string `json:"text" jsonschema:"the comment"`
	Version int    `json:"version,omitempty" jsonschema:"the version it is about; 0 means the current one"`
}

// Out is what create and update return to the model; the file goes to
// the platform and never to the model.
type Out struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
	Link    string `json:"link,omitempty"`

	file tool.Attachment
}

// Attachments hands the version to the platform as a file.
func (o Out) Attachments() []tool.Attachment { return []tool.Attachment{o.file} }

// CommentOut is what artifact_comment returns.
type CommentOut struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

// Create makes an artifact in the calling conversation.
func (a *Artifacts) Create(ctx context.Context, req *tool.Request, in CreateIn) (Out, error) {
	art, err := a.st.ArtifactCreate(ctx, &store.ArtifactCreateParams{
		ConversationID: req.ConversationID, Kind: store.ArtifactKind(in.Kind), Title: in.Title, Language: in.Language,
		Content: in.Content, Author: store.AgentAuthor(req.Agent), Now: a.now(),
	})
	if err != nil {
		return Out{}, err
	}
	return a.out(art), nil
}

// Update makes the next version of an artifact of the calling
// conversation (or of another in its fork tree).
func (a *Artifacts) Update(ctx context.Context, req *tool.Request, in UpdateIn) (Out, error) {
	id, err := a.mine(ctx, req, in.ID)
	if err != nil {
		return Out{}, err
	}
	p := &store.ArtifactUpdateParams{ID: id, Content: in.Content, Author: store.AgentAuthor(req.Agent), BaseVersion: in.BaseVersion, Now: a.now()}
	if in.Title != "" {
		p.Title = &in.Title
	}
	art, err := a.st.ArtifactUpdate(ctx, p)
	if err != nil {
		return Out{}, err
	}
	return a.out(art), nil
}

// Comment adds a comment to an artifact of the calling conversation's tree.
func (a *Artifacts) Comment(ctx context.Context, req *tool.Request, in CommentIn) (CommentOut, error) {
	id, err := a.mine(ctx, req, in.ID)
	if err != nil {
		return CommentOut{}, err
	}
	c, err := a.st.ArtifactComment(ctx, &store.ArtifactCommentParams{
		ArtifactID: id, Version: in.Version, Author: store.AgentAuthor(req.Agent), Text: in.Text, Now: a.now(),
	})
	if err != nil {
		return CommentOut{}, err
	}
	return CommentOut{ID: c.ID.String(), Version: c.Version}, nil
}

// mine finds an artifact the calling conversation may change: one of a
// conversation of the same fork tree (a fork edits what its parent made).
func (a *Artifacts) mine(ctx context.Context, req *tool.Request, raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(strings.TrimSpace(raw))
	if err != nil {
		// Models lose ids: the title of one of this conversation's
		// artifacts names it too (the newest of that title).
		if id, err = a.byTitle(ctx, req.ConversationID, raw); err != nil {
			return uuid.Nil, err
		}
	}
	art, err := a.st.ArtifactGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, fmt.Errorf("no artifact %s", id)
	} else if err != nil {
		return uuid.Nil, err
	}
	if art.ConversationID == req.ConversationID {
		return id, nil
	}
	here, err := a.st.ConversationGet(ctx, req.ConversationID)
	if err != nil {
		return uuid.Nil, err
	}
	there, err := a.st.ConversationGet(ctx, art.ConversationID)
	if err != nil {
		return uuid.Nil, err
	}
	if here.RootID != there.RootID {
		return uuid.Nil, fmt.Errorf("no artifact %s in this conversation", id) // not revealed
	}
	return id, nil
}

// byTitle finds the newest artifact of the conversation with this title.
func (a *Artifacts) byTitle(ctx context.Context, conv uuid.UUID, title string) (uuid.UUID, error) {
	list, err := a.st.ArtifactList(ctx, &store.ArtifactListParams{
		Visibility: store.Visibility{All: true}, ConversationID: &conv, Query: title, Limit: 200,
	})
	if err != nil {
		return uuid.Nil, err
	}
	for _, x := range list {
		if strings.EqualFold(x.Title, strings.TrimSpace(title)) {
			return x.ID, nil
		}
	}
	return uuid.Nil, fmt.Errorf("%q is not the id or the title of an artifact of this conversation", title)
}

func (a *Artifacts) out(art *store.Artifact) Out {
	link := a.Link(art.ID)
	caption := fmt.Sprintf("📄 **%s** (version %d)", art.Title, art.Version)
	if link != "" {
		caption += " — " + link
	}
	name, mime := FileName(art)
	return Out{ID: art.ID.String(), Version: art.Version, Link: link, file: tool.Attachment{
		Name: name, MimeType: mime, Data: []byte(art.Content), Title: fmt.Sprintf("%s · v%d", art.Title, art.Version), Caption: caption,
	}}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// extensions maps a code artifact's language to its file extension.
var extensions = map[string]string{
	"go": ".go", "python": ".py", "py": ".py", "javascript": ".js", "js": ".js", "typescript": ".ts", "ts": ".ts",
	"rust": ".rs", "java": ".java", "c": ".c", "cpp": ".cpp", "c++": ".cpp", "ruby": ".rb", "shell": ".sh",
	"bash": ".sh", "sh": ".sh", "sql": ".sql", "html": ".html", "css": ".css", "json": ".json", "yaml": ".yaml",
	"markdown": ".md", "kotlin": ".kt", "swift": ".swift", "php": ".php",
}

// FileName is the name and type of the file an artifact is posted as:
// the title made safe, with the extension of its kind or language.
func FileName(art *store.Artifact) (name, mime string) {
	base := strings.Trim(unsafeName.ReplaceAllString(path.Base(art.Title), "-"), "-.")
	if base == "" {
		base = "artifact"
	}
	ext, mime := ".txt", "text/plain"
	switch art.Kind {
	case store.ArtifactDocument:
		ext, mime = ".md", "text/markdown"
	case store.ArtifactPage:
		ext, mime = ".html", "text/html"
	case store.ArtifactCode:
		if e, ok := extensions[strings.ToLower(art.Language)]; ok {
			ext = e
		}
	}
	if path.Ext(base) != "" && art.Kind == store.ArtifactCode {
		return base, mime
	}
	return strings.TrimSuffix(base, path.Ext(base)) + ext, mime
}

// RegisterTools registers artifact_create, artifact_update and
// artifact_comment.
func RegisterTools(r *tool.Registry, a *Artifacts) error {
	err := errors.Join(
		tool.Register(r, tool.Def{
			Name: ToolCreate,
			Description: "Make an artifact people keep: a document, a web page or code, attached to this conversation " +
				"and posted as a file. Edit it later with artifact_update (every version stays readable).",
			Risk: tool.RiskLow,
			SchemaFunc: func(s *jsonschema.Schema) error {
				if p := s.Properties["kind"]; p != nil {
					p.Enum = []any{string(store.ArtifactDocument), string(store.ArtifactPage), string(store.ArtifactCode)}
				}
				return nil
			},
		}, a.Create),
		tool.Register(r, tool.Def{
			Name:        ToolUpdate,
			Description: "Edit an artifact of this conversation: send the whole new content; it becomes the next version and is posted again.",
			Risk:        tool.RiskLow,
		}, a.Update),
		tool.Register(r, tool.Def{
			Name:        ToolComment,
			Description: "Leave a comment on an artifact of this conversation (a review note, a to-do), kept beside its versions.",
			Risk:        tool.RiskLow,
		}, a.Comment),
	)
	if err != nil {
		return fmt.Errorf("registering artifact tools: %w", err)
	}
	return nil
}
