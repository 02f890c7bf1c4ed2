package sandbox

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboardhq/switchboard/core/tool"
)

// ToolRunCode is the tool's name.
const ToolRunCode = "run_code"

// RunCodeIn is run_code's input.
type RunCodeIn struct {
	Language string            `json:"language" jsonschema:"the program's language"`
	Code     string            `json:"code" jsonschema:"the whole program; it runs as a file in a fresh work folder, which is its current directory"`
	Files    map[string]string `json:"files,omitempty" jsonschema:"text files to put in the work folder first, by path relative to it (data.csv, input/a.txt)"`
}

// OutFile is a file the program wrote, as the model sees it; its content
// goes to the conversation as an attachment.
type OutFile struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// RunCodeOut is what run_code returns to the model; the files go to the
// platform and never to the model.
type RunCodeOut struct {
	ExitCode  int       `json:"exit_code"`
	Stdout    string    `json:"stdout"`
	Stderr    string    `json:"stderr,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
	TimedOut  bool      `json:"timed_out,omitempty"`
	Killed    string    `json:"killed,omitempty"`
	Files     []OutFile `json:"files,omitempty"`
	Skipped   []string  `json:"skipped_files,omitempty"`

	attachments []tool.Attachment
}

// Attachments hands the written files to the platform.
func (o RunCodeOut) Attachments() []tool.Attachment { return o.attachments }

// Risk is the tool's declared risk: medium when runs have no network (the
// program can change nothing outside its thrown-away folder; it only
// costs the host some CPU, memory and time, within the limits), high when
// it has the host's network (it can send what it likes anywhere the host
// reaches, the host's own loopback services included).
func (s *Sandbox) Risk() tool.Risk {
	if s.o.Network {
		return tool.RiskHigh
	}
	return tool.RiskMedium
}

// RegisterTool adds run_code to r, for the languages s finds an
// interpreter for. It is opt-in: only agents whose tools list names it
// are offered it. Call it once Check has passed.
func RegisterTool(r *tool.Registry, s *Sandbox) error {
	langs := s.Available()
	if len(langs) == 0 {
		return fmt.Errorf("registering %s: %w: no interpreter found", ToolRunCode, ErrUnavailable)
	}
	names := make([]string, len(langs))
	for i, l := range langs {
		names[i] = string(l)
	}
	net := "no network"
	if s.o.Network {
		net = "the network"
	}
	o := s.o
	desc := fmt.Sprintf("Run a short %s program in an isolated sandbox and get back what it printed and the files it wrote "+
		"(those are also shared in the conversation). It has %s, a read-only system, a fresh empty work folder as its "+
		"current directory (plus the files you pass), and limits: %s wall clock, %ds CPU, %d MiB memory per process, "+
		"%d processes, %d bytes of output kept per stream, %d bytes per file, %d files back. Nothing persists between calls. "+
		"Print results you need to read; write files people should get.",
		orList(names), net, o.Timeout, o.CPUSeconds, o.MemoryMB, o.MaxProcesses, o.MaxOutputBytes, o.MaxFileBytes, o.MaxFiles)
	enum := make([]any, len(names))
	for i, n := range names {
		enum[i] = n
	}
	return tool.Register(r, tool.Def{
		Name:        ToolRunCode,
		Description: desc,
		Risk:        s.Risk(),
		Tier:        tool.TierServer,
		OptIn:       true,
		// Output and error may each be the whole cap, every byte escaped.
		MaxOutputBytes: 2*6*o.MaxOutputBytes + 16<<10,
		SchemaFunc: func(sc *jsonschema.Schema) error {
			p, ok := sc.Properties["language"]
			if !ok {
				return errors.New("no language property")
			}
			p.Enum = enum
			return nil
		},
	}, func(ctx context.Context, _ *tool.Request, in RunCodeIn) (RunCodeOut, error) {
		return s.runTool(ctx, in)
	})
}

func (s *Sandbox) runTool(ctx context.Context, in RunCodeIn) (RunCodeOut, error) {
	res, err := s.Run(ctx, Language(in.Language), in.Code, in.Files)
	if err != nil {
		return RunCodeOut{}, err
	}
	out := RunCodeOut{
		ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, Truncated: res.Truncated,
		TimedOut: res.TimedOut, Killed: res.Killed, Skipped: res.Skipped,
	}
	for _, f := range res.Files {
		out.Files = append(out.Files, OutFile{Name: f.Name, Bytes: len(f.Data)})
		out.attachments = append(out.attachments, tool.Attachment{
			Name: path.Base(f.Name), MimeType: mimeType(f.Name, f.Data), Data: f.Data, Title: f.Name,
		})
	}
	return out, nil
}

// mimeType is the type the file's extension says, else plain text for
// UTF-8, else bytes.
func mimeType(name string, data []byte) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	if utf8.Valid(data) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
