package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/bots/voicenote"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/voice"
)

// Files people share with the bot (files:read): each is downloaded with the
// bot token from its url_private_download, within Options.FileMaxBytes and
// Options.FileMaxCount, and handed to core with the message. Files the
// model cannot read, or that are over the limits, go along by name with
// the reason, so the model can say what it did not see.

// Defaults of the file limits.
const (
	DefaultFileMaxBytes = 5 << 20 // Anthropic's limit for one image
	DefaultFileMaxCount = 5
)

// sharedFile is a file object of a message event.
type sharedFile struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Title              string `json:"title"`
	MimeType           string `json:"mimetype"`
	Size               int64  `json:"size"`
	URLPrivateDownload string `json:"url_private_download"`
	URLPrivate         string `json:"url_private"`
	// Mode is "hidden_by_limit" or "tombstone" for a file the bot cannot
	// read; FileAccess "check_file_info" for a Slack Connect file.
	Mode       string `json:"mode"`
	FileAccess string `json:"file_access"`
	// Subtype is slack_audio for an audio clip recorded in Slack (the
	// microphone button), which is a voice note to hear.
	Subtype string `json:"subtype,omitempty"`
}

// audioType is the media type a shared file is heard as, or "" when it is
// not a recording or the adapter hears none (no HearFunc).
func (a *Adapter) audioType(f sharedFile) string {
	if a.opts.HearFunc == nil {
		return ""
	}
	return voicenote.AudioType(f.MimeType, firstOf(f.Name, f.Title), f.Subtype == "slack_audio")
}

// readFiles downloads the files of a message for the model, within the
// limits. It never fails the message: a file that cannot be read is
// listed with the reason instead.
func (a *Adapter) readFiles(ctx context.Context, w *workspace, files []sharedFile) []core.UserFile {
	if len(files) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.FileTimeout)
	defer cancel()
	out := make([]core.UserFile, 0, len(files))
	for i, f := range files {
		uf := core.UserFile{Name: firstOf(f.Name, f.Title, f.ID, "file"), MimeType: f.MimeType, Size: f.Size}
		audio := a.audioType(f)
		if audio != "" {
			uf.MimeType = audio
		}
		switch {
		case a.opts.FileMaxCount < 0:
			uf.Note = "the bot does not read files (slack.files.max_count is 0)"
		case i >= a.opts.FileMaxCount:
			uf.Note = fmt.Sprintf("more than the %d files read per message", a.opts.FileMaxCount)
		case core.FileKind(f.MimeType) == "" && audio == "":
			uf.Note = "a file type the model cannot read"
		case f.Size > a.opts.FileMaxBytes:
			uf.Note = fmt.Sprintf("%s, over the %s limit", byteSize(f.Size), byteSize(a.opts.FileMaxBytes))
		case f.Mode == "hidden_by_limit" || f.Mode == "tombstone" || f.FileAccess == "check_file_info":
			uf.Note = "Slack does not let the bot read it"
		default:
			data, err := a.download(ctx, w, firstOf(f.URLPrivateDownload, f.URLPrivate))
			if err != nil {
				a.log.WarnContext(ctx, "downloading a shared slack file", "file_id", f.ID, "err", err)
				uf.Note = "it could not be downloaded"
				if errors.Is(err, errTooLarge) {
					uf.Note = fmt.Sprintf("over the %s limit", byteSize(a.opts.FileMaxBytes))
				}
				break
			}
			uf.Data, uf.Size = data, int64(len(data))
		}
		out = append(out, uf)
	}
	return out
}

var errTooLarge = errors.New("file over the size limit")

// download reads one file with the bot token (slack-go sends it only to a
// Slack host or the configured API host), at most FileMaxBytes of it.
func (a *Adapter) download(ctx context.Context, w *workspace, url string) ([]byte, error) {
	if url == "" {
		return nil, errors.New("the file has no download url")
	}
	buf := &capped{max: a.opts.FileMaxBytes}
	if err := w.api.GetFileContext(ctx, url, buf); err != nil {
		if buf.over {
			return nil, errTooLarge
		}
		return nil, err
	}
	return buf.b, nil
}

// capped is a writer that refuses more than max bytes.
type capped struct {
	b    []byte
	max  int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if int64(len(c.b)+len(p)) > c.max {
		c.over = true
		return 0, errTooLarge
	}
	c.b = append(c.b, p...)
	return len(p), nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// hear hands the first recording among the message's files (a Slack audio
// clip, an audio file) to HearFunc, which makes the message the spoken
// one; the other files stay as they are.
func (a *Adapter) hear(ctx context.Context, in *core.Inbound) error {
	if a.opts.HearFunc == nil {
		return nil
	}
	for i, f := range in.Files {
		if len(f.Data) == 0 || voicenote.AudioType(f.MimeType, f.Name, false) == "" {
			continue
		}
		files := in.Files
		in.Files = slices.Delete(slices.Clone(files), i, i+1)
		if err := a.opts.HearFunc(ctx, in, voice.Recording{Name: f.Name, MimeType: f.MimeType, Data: f.Data}); err != nil {
			in.Files = files
			return fmt.Errorf("hearing the voice note %q of slack event %s: %w", f.Name, in.EventID, err)
		}
		return nil
	}
	return nil
}

// hasFiles says whether an event's message shares files.
func hasFiles(ev *innerEvent) bool {
	return len(ev.Files) > 0 && !strings.HasPrefix(ev.Subtype, "message_")
}
