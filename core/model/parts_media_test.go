package model

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMediaParts: a shared image and PDF go to Anthropic as image and
// document blocks after the text, and to OpenAI as image and file content
// parts of the same user message.
func TestMediaParts(t *testing.T) {
	m := Message{Role: RoleUser, Parts: []Part{
		{Kind: PartText, Text: "look"},
		{Kind: PartImage, Name: "a.png", MimeType: "image/png", Data: []byte("png")},
		{Kind: PartDocument, Name: "b.pdf", MimeType: "application/pdf", Data: []byte("pdf")},
	}}
	a, err := json.Marshal(anthropicBlocks(m))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"type":"text"`, `"type":"image"`, `"media_type":"image/png"`, `"data":"cG5n"`, `"type":"document"`, `"title":"b.pdf"`, `"media_type":"application/pdf"`, `"data":"cGRm"`} {
		if !strings.Contains(string(a), want) {
			t.Errorf("anthropic blocks %s: missing %s", a, want)
		}
	}
	msgs, err := openaiMessages(m)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("openai messages %v, %v; want one user message", msgs, err)
	}
	o, err := json.Marshal(msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"type":"text"`, `"text":"look"`, `"type":"image_url"`, `"url":"data:image/png;base64,cG5n"`, `"type":"file"`, `"file_data":"data:application/pdf;base64,cGRm"`, `"filename":"b.pdf"`} {
		if !strings.Contains(string(o), want) {
			t.Errorf("openai message %s: missing %s", o, want)
		}
	}
}
