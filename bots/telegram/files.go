package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf16"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
)

// Files people send: each is looked up with getFile and downloaded from
// the Bot API's file URL within Options.FileMaxBytes and FileMaxCount, and
// handed to core with the message, as Slack's and Discord's are. Files the
// model cannot read, or over the limits, go along by name with the reason.

// Defaults of the file limits, as on Slack and Discord.
const (
	DefaultFileMaxBytes = 5 << 20
	DefaultFileMaxCount = 5
)

// incoming is a file a message carries.
type incoming struct {
	id, name, mime string
	size           int64
}

// attachments lists a message's files: a document, or the largest size of
// a photo.
func attachments(m *models.Message) []incoming {
	var out []incoming
	if d := m.Document; d != nil {
		name := d.FileName
		if name == "" {
			name = "document"
		}
		out = append(out, incoming{id: d.FileID, name: name, mime: d.MimeType, size: d.FileSize})
	}
	if len(m.Photo) > 0 {
		p := m.Photo[len(m.Photo)-1] // sizes come smallest first
		out = append(out, incoming{id: p.FileID, name: "photo.jpg", mime: "image/jpeg", size: int64(p.FileSize)})
	}
	return out
}

func (a *Adapter) readFiles(ctx context.Context, files []incoming, fetch bool) []core.UserFile {
	if len(files) == 0 {
		return nil
	}
	out := make([]core.UserFile, 0, len(files))
	for i, f := range files {
		uf := core.UserFile{Name: f.name, MimeType: f.mime, Size: f.size}
		switch {
		case a.opts.FileMaxCount < 0:
			uf.Note = "the bot does not read files"
		case !fetch:
			uf.Note = "not downloaded: the message was not addressed to the bot"
		case i >= a.opts.FileMaxCount:
			uf.Note = fmt.Sprintf("more than the %d files read per message", a.opts.FileMaxCount)
		case core.FileKind(f.mime) == "":
			uf.Note = "a file type the model cannot read"
		case f.size > a.opts.FileMaxBytes:
			uf.Note = fmt.Sprintf("%d bytes, over the %d-byte limit", f.size, a.opts.FileMaxBytes)
		default:
			data, err := a.download(ctx, f.id)
			if err != nil {
				a.log.WarnContext(ctx, "downloading a telegram file", "file_id", f.id, "error", redactToken(err.Error(), a.opts.Token))
				uf.Note = "it could not be downloaded"
				break
			}
			uf.Data, uf.Size = data, int64(len(data))
		}
		out = append(out, uf)
	}
	return out
}

// download reads one file: getFile gives its path, then the file URL
// serves it (https://core.telegram.org/bots/api#getfile).
func (a *Adapter) download(ctx context.Context, fileID string) ([]byte, error) {
	f, err := a.api.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
	if err != nil {
		return nil, fmt.Errorf("getFile: %w", err)
	}
	if f.FilePath == "" {
		return nil, errors.New("getFile gave no file_path")
	}
	if f.FileSize > a.opts.FileMaxBytes {
		return nil, fmt.Errorf("the file is over the %d-byte limit", a.opts.FileMaxBytes)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.api.FileDownloadLink(f), nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET file: %s", resp.Status)
	}
	data, over, err := bots.ReadAtMost(resp.Body, a.opts.FileMaxBytes)
	if over {
		return nil, fmt.Errorf("the file is over the %d-byte limit", a.opts.FileMaxBytes)
	}
	return data, err
}

func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }

func utf16Decode(u []uint16) []rune { return utf16.Decode(u) }

// Profile reads a person's name (a core.ProfileFunc) from their private
// chat with the bot (getChat), else from their last message the bot saw
// (a bot may read only the chats of people who started it); Telegram
// shares no time zone.
func (a *Adapter) Profile(ctx context.Context, _, userID string) (core.Profile, error) {
	id, err := chatID(userID)
	if err != nil {
		return core.Profile{}, err
	}
	c, err := a.api.GetChat(ctx, &tgbot.GetChatParams{ChatID: id})
	if err != nil {
		if name, ok := a.names.Load(userID); ok && errors.Is(err, tgbot.ErrorBadRequest) {
			return core.Profile{DisplayName: name}, nil
		}
		return core.Profile{}, fmt.Errorf("reading telegram user %s: %w", userID, err)
	}
	name := c.FirstName
	if c.LastName != "" {
		name += " " + c.LastName
	}
	if name == "" {
		name = c.Username
	}
	return core.Profile{DisplayName: name}, nil
}
