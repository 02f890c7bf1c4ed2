package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

// Files people attach to a message: each is downloaded from its CDN url
// (Discord signs the url; no token is sent) within Options.FileMaxBytes and
// FileMaxCount and handed to core with the message. Files the model cannot
// read, or over the limits, go along by name with the reason.

// Defaults of the file limits, as on Slack.
const (
	DefaultFileMaxBytes = 5 << 20
	DefaultFileMaxCount = 5
)

func (a *Adapter) readAttachments(atts []*discordgo.MessageAttachment, fetch bool) []core.UserFile {
	if len(atts) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.FileTimeout)
	defer cancel()
	out := make([]core.UserFile, 0, len(atts))
	for i, at := range atts {
		if at == nil {
			continue
		}
		uf := core.UserFile{Name: at.Filename, MimeType: at.ContentType, Size: int64(at.Size)}
		switch {
		case a.opts.FileMaxCount < 0:
			uf.Note = "the bot does not read files"
		case !fetch:
			uf.Note = "not downloaded: the message did not mention the bot"
		case i >= a.opts.FileMaxCount:
			uf.Note = fmt.Sprintf("more than the %d files read per message", a.opts.FileMaxCount)
		case core.FileKind(at.ContentType) == "":
			uf.Note = "a file type the model cannot read"
		case int64(at.Size) > a.opts.FileMaxBytes:
			uf.Note = fmt.Sprintf("%d bytes, over the %d-byte limit", at.Size, a.opts.FileMaxBytes)
		default:
			data, err := a.download(ctx, at.URL)
			if err != nil {
				a.log.WarnContext(ctx, "downloading a discord attachment", "attachment_id", at.ID, "err", err)
				uf.Note = "it could not be downloaded"
				break
			}
			uf.Data, uf.Size = data, int64(len(data))
		}
		out = append(out, uf)
	}
	return out
}

// download reads one attachment, at most FileMaxBytes of it.
func (a *Adapter) download(ctx context.Context, url string) ([]byte, error) {
	if url == "" {
		return nil, errors.New("the attachment has no url")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET attachment: %s", resp.Status)
	}
	data, over, err := bots.ReadAtMost(resp.Body, a.opts.FileMaxBytes)
	if over {
		return nil, fmt.Errorf("the attachment is over the %d-byte limit", a.opts.FileMaxBytes)
	}
	return data, err
}
