package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/core/tool"
)

// badNameChars are what a server's tool name may hold that a model
// provider's tool name may not.
var badNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// registryName is server__tool, cleaned to what the providers accept.
func (s *server) registryName(remote string) string {
	name := s.cfg.ToolName(badNameChars.ReplaceAllString(remote, "_"))
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// build makes the registry tool for one of the server's tools.
func (s *server) build(t *mcp.Tool) (*tool.Tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("encoding the input schema: %w", err)
	}
	if string(schema) == "null" {
		schema = nil
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	if desc == "" {
		desc = "Tool " + t.Name
	}
	desc += fmt.Sprintf(" (tool %s of the MCP server %s)", t.Name, s.cfg.Name)
	o := s.m.opts
	remote := t.Name
	return tool.NewRaw(tool.Def{
		Name:        s.registryName(remote),
		Description: desc,
		Risk:        s.cfg.Risk.For(remote),
		Audience:    s.cfg.audience(),
		// The output is cut below this; the margin is the envelope.
		MaxOutputBytes: o.MaxOutputBytes + 4096,
	}, schema, func(ctx context.Context, req *tool.Request, args json.RawMessage) (any, error) {
		return s.call(ctx, remote, args)
	})
}

// Output is what the model sees of a call: the server's content, with
// text cut at the output cap, and its structured content. Images and audio
// become files for the platform (the model sees a note).
type Output struct {
	Content    []OutputContent `json:"content"`
	Structured any             `json:"structured_content,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`

	files []tool.Attachment
}

// OutputContent is one content block.
type OutputContent struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Attachments are the images and audio of the result.
func (o Output) Attachments() []tool.Attachment { return o.files }

// call runs the server's tool remote. The turn's ctx reaches the server:
// a cancelled turn sends notifications/cancelled, and the call's timeout
// does the same.
func (s *server) call(ctx context.Context, remote string, args json.RawMessage) (any, error) {
	cs := s.current()
	if cs == nil {
		return nil, fmt.Errorf("the MCP server %s is disconnected; try again later", s.cfg.Name)
	}
	timeout := s.m.opts.CallTimeout
	if s.cfg.Timeout > 0 {
		timeout = time.Duration(s.cfg.Timeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: remote, Arguments: args})
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("the MCP server %s did not answer %s within %s", s.cfg.Name, remote, timeout)
	case err != nil:
		return nil, fmt.Errorf("calling %s on the MCP server %s: %w", remote, s.cfg.Name, err)
	}
	out := s.output(remote, res)
	if res.IsError {
		var texts []string
		for _, c := range out.Content {
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the tool reported an error without a message"
		}
		return nil, fmt.Errorf("%s (MCP server %s): %s", remote, s.cfg.Name, msg)
	}
	return out, nil
}

// output converts the result, cutting text so that the whole stays under
// the output cap.
func (s *server) output(remote string, res *mcp.CallToolResult) Output {
	budget := s.m.opts.MaxOutputBytes
	out := Output{Content: []OutputContent{}}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && len(b) <= budget/2 {
			out.Structured = json.RawMessage(b)
			budget -= len(b)
		} else {
			out.Truncated = true
		}
	}
	text := func(t string) string {
		if len(t) <= budget {
			budget -= len(t)
			return t
		}
		cut := max(budget, 0)
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		out.Truncated = true
		budget = 0
		return t[:cut] + fmt.Sprintf("… [cut: %d more bytes]", len(t)-cut)
	}
	for i, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Content = append(out.Content, OutputContent{Type: "text", Text: text(c.Text)})
		case *mcp.ImageContent:
			name := fmt.Sprintf("%s-%d%s", remote, i+1, extension(c.MIMEType))
			out.files = append(out.files, tool.Attachment{Name: name, MimeType: c.MIMEType, Data: c.Data})
			out.Content = append(out.Content, OutputContent{Type: "image", Name: name, MIMEType: c.MIMEType, Note: "attached as a file for the person; you cannot see it"})
		case *mcp.AudioContent:
			name := fmt.Sprintf("%s-%d%s", remote, i+1, extension(c.MIMEType))
			out.files = append(out.files, tool.Attachment{Name: name, MimeType: c.MIMEType, Data: c.Data})
			out.Content = append(out.Content, OutputContent{Type: "audio", Name: name, MIMEType: c.MIMEType, Note: "attached as a file for the person"})
		case *mcp.ResourceLink:
			out.Content = append(out.Content, OutputContent{Type: "resource_link", URI: c.URI, Name: c.Name, MIMEType: c.MIMEType, Text: text(c.Description)})
		case *mcp.EmbeddedResource:
			oc := OutputContent{Type: "resource"}
			if r := c.Resource; r != nil {
				oc.URI, oc.MIMEType = r.URI, r.MIMEType
				if r.Text != "" {
					oc.Text = text(r.Text)
				} else if len(r.Blob) > 0 {
					oc.Note = fmt.Sprintf("%d bytes of binary content, not shown", len(r.Blob))
				}
			}
			out.Content = append(out.Content, oc)
		default:
			out.Content = append(out.Content, OutputContent{Type: "other", Note: fmt.Sprintf("a %T block, not shown", c)})
		}
	}
	return out
}

func extension(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "audio/wav", "audio/x-wav":
		return ".wav"
	case "audio/mpeg":
		return ".mp3"
	}
	return ""
}
