package core

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core/model"
)

// Files people share with a message: which kinds reach the model, and how.

// Media types a model is shown as an image; the four both providers read.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// FileKind says how a file reaches the model: "image", "document" (a PDF),
// "text" (its text, inline), or "" when it cannot (it is listed by name).
func FileKind(mimeType string) string {
	mt := strings.ToLower(strings.TrimSpace(strings.Split(mimeType, ";")[0]))
	switch {
	case imageTypes[mt]:
		return "image"
	case mt == "application/pdf":
		return "document"
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml", mt == "application/x-yaml", mt == "application/yaml":
		return "text"
	}
	return ""
}

// fileParts are the model parts of a message's files: images and PDFs as
// themselves, text inline, and one line naming the files the model cannot
// read (unsupported, too large, or not downloaded) with the reason.
func fileParts(files []UserFile) []model.Part {
	var parts []model.Part
	var left []string
	for _, f := range files {
		kind := FileKind(f.MimeType)
		if len(f.Data) == 0 || kind == "" {
			note := f.Note
			if note == "" {
				note = "a file type the model cannot read"
			}
			left = append(left, fmt.Sprintf("%s (%s)", f.Name, note))
			continue
		}
		switch kind {
		case "image":
			parts = append(parts, model.Part{Kind: model.PartImage, Name: f.Name, MimeType: strings.ToLower(f.MimeType), Data: f.Data})
		case "document":
			parts = append(parts, model.Part{Kind: model.PartDocument, Name: f.Name, MimeType: "application/pdf", Data: f.Data})
		case "text":
			if !utf8.Valid(f.Data) {
				left = append(left, fmt.Sprintf("%s (not valid UTF-8 text)", f.Name))
				continue
			}
			parts = append(parts, model.Part{Kind: model.PartText, Text: "[file " + f.Name + "]\n" + string(f.Data)})
		}
	}
	if len(left) > 0 {
		parts = append(parts, model.Part{Kind: model.PartText, Text: "[files shared that you cannot see: " + strings.Join(left, "; ") + "]"})
	}
	return parts
}
