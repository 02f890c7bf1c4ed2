package skill

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core/tool"
)

// SourceFunc returns the skills offered to the call's agent in the call's
// context (already layered and filtered, see Offered).
type SourceFunc func(ctx context.Context, req *tool.Request) ([]Layered, error)

// LoadInput is load_skill's input.
type LoadInput struct {
	Name string `json:"name" jsonschema:"the skill's name, as in the skill index"`
}

// LoadOutput is load_skill's result.
type LoadOutput struct {
	Name         string   `json:"name"`
	Instructions string   `json:"instructions"`
	Files        []string `json:"files,omitempty"`
}

// ReadFileInput is read_skill_file's input.
type ReadFileInput struct {
	Name string `json:"name" jsonschema:"the skill's name"`
	Path string `json:"path" jsonschema:"the file's path inside the skill, e.g. templates/agenda.md"`
}

// ReadFileOutput is read_skill_file's result.
type ReadFileOutput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Tool names.
const (
	LoadToolName     = "load_skill"
	ReadFileToolName = "read_skill_file"
)

func find(ctx context.Context, src SourceFunc, req *tool.Request, name string) (*Skill, error) {
	skills, err := src(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("reading the skills: %w", err)
	}
	for _, s := range skills {
		if s.Name == name {
			return s.Skill, nil
		}
	}
	return nil, fmt.Errorf("no skill %q is offered here; the skill index lists the ones you can use", name)
}

// Tools returns load_skill and read_skill_file over the skills src offers.
func Tools(src SourceFunc) ([]*tool.Tool, error) {
	load, err := tool.New(tool.Def{
		Name:        LoadToolName,
		Description: "Read the instructions of one of your skills (listed in the skill index) before following it.",
		Risk:        tool.RiskLow,
	}, func(ctx context.Context, req *tool.Request, in LoadInput) (LoadOutput, error) {
		s, err := find(ctx, src, req, in.Name)
		if err != nil {
			return LoadOutput{}, err
		}
		return LoadOutput{Name: s.Name, Instructions: s.Instructions, Files: s.FileNames()}, nil
	})
	if err != nil {
		return nil, err
	}
	read, err := tool.New(tool.Def{
		Name:        ReadFileToolName,
		Description: "Read a resource file of one of your skills (a template, a reference, a script) by its path inside the skill.",
		Risk:        tool.RiskLow,
	}, func(ctx context.Context, req *tool.Request, in ReadFileInput) (ReadFileOutput, error) {
		if err := CheckPath(in.Path); err != nil {
			return ReadFileOutput{}, fmt.Errorf("path %q: %w", in.Path, err)
		}
		s, err := find(ctx, src, req, in.Name)
		if err != nil {
			return ReadFileOutput{}, err
		}
		data, ok := s.Files[in.Path]
		if !ok {
			return ReadFileOutput{}, fmt.Errorf("skill %s has no file %q (it has %v)", s.Name, in.Path, s.FileNames())
		}
		if !utf8.Valid(data) {
			return ReadFileOutput{}, errors.New("the file is binary; only text files can be read")
		}
		return ReadFileOutput{Path: in.Path, Content: string(data)}, nil
	})
	if err != nil {
		return nil, err
	}
	return []*tool.Tool{load, read}, nil
}
