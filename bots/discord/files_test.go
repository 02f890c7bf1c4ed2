package discord

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/discordtest"
)

// TestAttachmentsReachCore: a message that mentions the bot with an image,
// an archive and an image over the limit hands core the image's bytes
// (downloaded from its url) and the others by name with the reason; a
// message that does not mention the bot downloads nothing.
func TestAttachmentsReachCore(t *testing.T) {
	t.Parallel()
	_, fake, fc := start(t, func(o *Options) { o.FileMaxBytes = 10 })
	fake.UserMessageFiles(chanGeneral, alice, mention()+" what is this?",
		discordtest.Attachment{Filename: "a.png", ContentType: "image/png", Data: []byte("png-bytes")},
		discordtest.Attachment{Filename: "b.zip", ContentType: "application/zip", Data: []byte("PK")},
		discordtest.Attachment{Filename: "c.jpg", ContentType: "image/jpeg", Data: []byte("far too many bytes")},
	)
	in := fc.waitInbound(t, 1)
	if len(in.Files) != 3 || string(in.Files[0].Data) != "png-bytes" || in.Files[0].MimeType != "image/png" {
		t.Fatalf("files %+v, want the image's bytes first", in.Files)
	}
	if f := in.Files[1]; f.Data != nil || !strings.Contains(f.Note, "cannot read") {
		t.Errorf("b.zip = %+v, want it named as unreadable", f)
	}
	if f := in.Files[2]; f.Data != nil || !strings.Contains(f.Note, "over the 10-byte limit") {
		t.Errorf("c.jpg = %+v, want it named as over the limit", f)
	}

	fake.UserMessageFiles(chanGeneral, alice, "no mention here",
		discordtest.Attachment{Filename: "d.png", ContentType: "image/png", Data: []byte("png")})
	in = fc.waitInbound(t, 2)
	if len(in.Files) != 1 || in.Files[0].Data != nil || !strings.Contains(in.Files[0].Note, "did not mention the bot") {
		t.Fatalf("files of a message without a mention %+v, want d.png named, not downloaded", in.Files)
	}
}
