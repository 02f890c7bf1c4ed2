package core

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/model"
)

// TestFileParts: images and PDFs become media parts, text files inline
// text, and what the model cannot read is named with the reason, in one
// line after them.
func TestFileParts(t *testing.T) {
	t.Parallel()
	parts := fileParts([]UserFile{
		{Name: "a.png", MimeType: "image/PNG", Data: []byte("png")},
		{Name: "b.pdf", MimeType: "application/pdf", Data: []byte("pdf")},
		{Name: "c.csv", MimeType: "text/csv; charset=utf-8", Data: []byte("x,y\n1,2")},
		{Name: "d.zip", MimeType: "application/zip"},
		{Name: "e.jpg", MimeType: "image/jpeg", Note: "12.0 MB, over the 5.0 MB limit"},
	})
	kinds := []model.PartKind{model.PartImage, model.PartDocument, model.PartText, model.PartText}
	if len(parts) != len(kinds) {
		t.Fatalf("%d parts %+v, want %d", len(parts), parts, len(kinds))
	}
	for i, k := range kinds {
		if parts[i].Kind != k {
			t.Fatalf("part %d is %s, want %s", i, parts[i].Kind, k)
		}
	}
	if parts[0].MimeType != "image/png" || string(parts[1].Data) != "pdf" || !strings.Contains(parts[2].Text, "[file c.csv]\nx,y") {
		t.Fatalf("parts %+v: want the image's type lowercased, the PDF's bytes, the CSV's text", parts[:3])
	}
	if last := parts[3].Text; !strings.Contains(last, "d.zip (a file type the model cannot read)") || !strings.Contains(last, "e.jpg (12.0 MB, over the 5.0 MB limit)") {
		t.Fatalf("the unreadable files line %q, want both named with the reason", last)
	}
}
