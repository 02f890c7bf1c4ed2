package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboardhq/switchboard/core/tool"
)

// Limits on ask_user. Choices become buttons: Slack caps a button's text
// at 75 characters; Discord fits 25 buttons but ten is already a lot to
// read.
const (
	AskUserName    = "ask_user"
	MinChoices     = 2
	MaxChoices     = 10
	MaxChoiceLen   = 75
	MaxQuestionLen = 1500 // leaves room in a 2,000-character Discord message
)

// AskUserInput is the input of ask_user.
type AskUserInput struct {
	Question      string   `json:"question" jsonschema:"the question, in one or two sentences"`
	Choices       []string `json:"choices" jsonschema:"2 to 10 short answers to pick from, each at most 75 characters; they become buttons"`
	AllowFreeText bool     `json:"allow_free_text,omitempty" jsonschema:"true to also accept a typed answer that is none of the choices"`
}

// AskUserAnswer is the result the model sees once the user has answered,
// whoever collected the answer (a client, a button, the console).
type AskUserAnswer struct {
	Answer   string `json:"answer"`
	FreeText bool   `json:"free_text,omitempty"` // typed, not one of the choices
}

// AskUserPayload is the Pause.Payload a client receives for ask_user.
type AskUserPayload struct {
	Question      string   `json:"question"`
	Choices       []string `json:"choices"`
	AllowFreeText bool     `json:"allow_free_text"`
}

// QuestionPayload is the Pause.Payload of a headless ask_user.
type QuestionPayload struct {
	AllowFreeText bool `json:"allow_free_text"`
}

func askUserDef(tier tool.Tier) tool.Def {
	return tool.Def{
		Name: AskUserName,
		Description: "Ask the user a multiple-choice question and wait for the answer. " +
			"Use it when you need a decision or a preference you cannot infer; the conversation pauses until the user picks a choice. " +
			"Give 2 to 10 short, distinct choices.",
		Risk:       tool.RiskLow,
		Tier:       tier,
		SchemaFunc: askUserSchema,
	}
}

func askUserSchema(s *jsonschema.Schema) error {
	q, c := s.Properties["question"], s.Properties["choices"]
	if q == nil || c == nil || c.Items == nil {
		return errors.New("ask_user schema lacks question or choices")
	}
	q.MinLength = jsonschema.Ptr(1)
	q.MaxLength = jsonschema.Ptr(MaxQuestionLen)
	c.MinItems = jsonschema.Ptr(MinChoices)
	c.MaxItems = jsonschema.Ptr(MaxChoices)
	c.UniqueItems = true
	c.Items.MinLength = jsonschema.Ptr(1)
	c.Items.MaxLength = jsonschema.Ptr(MaxChoiceLen)
	s.Properties["allow_free_text"].Default = json.RawMessage(`false`)
	return nil
}

// normalize trims the text and checks what the schema cannot: blank
// choices and choices that differ only in case or spacing, which would
// make two buttons the user cannot tell apart.
func (in AskUserInput) normalize() (AskUserInput, error) {
	in.Question = strings.TrimSpace(in.Question)
	if in.Question == "" {
		return in, errors.New("question: must not be blank")
	}
	seen := map[string]int{}
	choices := make([]string, len(in.Choices))
	for i, c := range in.Choices {
		c = strings.Join(strings.Fields(c), " ")
		if c == "" {
			return in, fmt.Errorf("choices[%d]: must not be blank", i)
		}
		key := strings.ToLower(c)
		if j, dup := seen[key]; dup {
			return in, fmt.Errorf("choices[%d]: %q repeats choices[%d]", i, c, j)
		}
		seen[key] = i
		choices[i] = c
	}
	in.Choices = choices
	return in, nil
}

// askUserFrontend hands the question to the live client.
func askUserFrontend(_ context.Context, _ *tool.Request, in AskUserInput) (AskUserAnswer, error) {
	in, err := in.normalize()
	if err != nil {
		return AskUserAnswer{}, err
	}
	payload, err := json.Marshal(AskUserPayload(in))
	if err != nil {
		return AskUserAnswer{}, fmt.Errorf("encoding question for the client: %w", err)
	}
	return AskUserAnswer{}, tool.PauseWith(tool.Pause{
		Kind:    tool.PauseFrontend,
		Prompt:  in.Question,
		Choices: in.Choices,
		Payload: payload,
	})
}

// askUserQuestion pauses for a person: the platform draws the choices as
// buttons (the console as a numbered prompt) and the answer resumes the
// turn.
func askUserQuestion(_ context.Context, _ *tool.Request, in AskUserInput) (AskUserAnswer, error) {
	in, err := in.normalize()
	if err != nil {
		return AskUserAnswer{}, err
	}
	payload, err := json.Marshal(QuestionPayload{AllowFreeText: in.AllowFreeText})
	if err != nil {
		return AskUserAnswer{}, fmt.Errorf("encoding question payload: %w", err)
	}
	return AskUserAnswer{}, tool.PauseWith(tool.Pause{
		Kind:    tool.PauseQuestion,
		Prompt:  in.Question,
		Choices: in.Choices,
		Payload: payload,
	})
}
