package matrix

import (
	"context"
	"fmt"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"

	"github.com/switchboardhq/switchboard/bots"
)

// fileContent uploads a file (POST /_matrix/media/v3/upload) and returns
// the m.image or m.file event that shows it, with its caption as the body
// (Matrix 1.10 captions: body is the caption when filename differs).
func (a *Adapter) fileContent(ctx context.Context, f *bots.File) (*event.MessageEventContent, error) {
	mimeType := f.MimeType
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	var up *mautrix.RespMediaUpload
	err := a.retry(ctx, func() error {
		var err error
		up, err = a.cli.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: f.Data, ContentType: mimeType, FileName: f.Name})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("uploading %s: %w", f.Name, refusal(err))
	}
	msgtype := event.MsgFile
	if strings.HasPrefix(mimeType, "image/") {
		msgtype = event.MsgImage
	}
	c := &event.MessageEventContent{
		MsgType: msgtype, Body: f.Name, FileName: f.Name, URL: up.ContentURI.CUString(),
		Info:     &event.FileInfo{MimeType: mimeType, Size: len(f.Data)},
		Mentions: &event.Mentions{},
	}
	caption := f.Caption
	if caption == "" && f.Title != "" && f.Title != f.Name {
		caption = f.Title
	}
	if caption != "" {
		md := markdown(caption, msgtype)
		c.Body, c.Format, c.FormattedBody = md.Body, md.Format, md.FormattedBody
	}
	return c, nil
}
