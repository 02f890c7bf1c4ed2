package slack

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots"
)

// A post tagged with a key is found again through its metadata, part by
// part, and only from the thread it went to.
func TestFindPostedByKey(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.TextLimit = 100 })
	ctx := context.Background()
	to := bots.Target{Channel: "C1", Thread: "1700000000.000001"}
	since := time.Now()
	long := ""
	for range 30 {
		long += "word word "
	}
	refs, err := env.a.Post(ctx, to, &bots.Message{Text: long, Key: "entry-1"})
	require.NoError(t, err)
	require.Greater(t, len(refs), 1, "a long text is split, each part tagged")
	_, err = env.a.Post(ctx, to, &bots.Message{Text: "another", Key: "entry-2"})
	require.NoError(t, err)

	found, err := env.a.FindPosted(ctx, to, "entry-1", since)
	require.NoError(t, err)
	require.Equal(t, refs, found, "every part of the post, in order")
	none, err := env.a.FindPosted(ctx, to, "entry-3", since)
	require.NoError(t, err)
	require.Empty(t, none, "a post that never arrived is not found")
	calls := env.srv.Calls("conversations.replies")
	require.NotEmpty(t, calls)
	require.Equal(t, "1", calls[0].Params.Get("include_all_metadata"), "metadata is only returned when asked for")
}

// A reset native stream is stopped and goes on in the same message, which
// the final text replaces: the retried call's text is never appended to the
// dead call's.
func TestStreamResetReplacesInPlace(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	to := bots.Target{Channel: "C1", Thread: "1700000000.000001", UserID: "U1", Workspace: "T0FAKE"}
	st, err := env.a.StartStream(ctx, to, nil)
	require.NoError(t, err)
	require.NoError(t, st.Append(ctx, "reply c00 c01"))
	require.NoError(t, st.Reset(ctx))
	env.clock.Advance(2 * time.Second)
	require.NoError(t, st.Append(ctx, "reply"))
	refs, err := st.Finish(ctx, &bots.Message{Text: "reply done"})
	require.NoError(t, err)
	require.Len(t, refs, 1)
	live := 0
	for _, m := range env.srv.Messages("C1") {
		if !m.Deleted {
			live++
		}
	}
	require.Equal(t, 1, live, "one message")
	msg, _ := env.srv.Message("C1", refs[0].ID)
	require.False(t, msg.Streaming, "the stream is stopped")
	require.Equal(t, "reply done", msg.Text, "the final text replaced the cut one")
	require.Empty(t, msg.Markdown)
}

// A process that takes over a stream another one left open stops it and
// replaces its text.
func TestResumeStreamClosesAndReplaces(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	to := bots.Target{Channel: "C1", Thread: "1700000000.000001", UserID: "U1", Workspace: "T0FAKE"}
	dead, err := env.a.StartStream(ctx, to, nil)
	require.NoError(t, err)
	require.NoError(t, dead.Append(ctx, "half a rep"))
	left := dead.Refs()
	require.Len(t, left, 1)

	st, err := env.a.ResumeStream(ctx, to, left, nil)
	require.NoError(t, err)
	refs, err := st.Finish(ctx, &bots.Message{Text: "the whole reply", Key: "e1"})
	require.NoError(t, err)
	require.Equal(t, left, refs, "the same message")
	msg, _ := env.srv.Message("C1", left[0].ID)
	require.False(t, msg.Streaming)
	require.Equal(t, "the whole reply", msg.Text)
}

// A stream whose ts was never recorded is found among the bot's untagged
// messages in the thread since it was about to start; tagged posts and the
// thread's parent are not taken for it.
func TestFindStreamSince(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	to := bots.Target{Channel: "C1", Thread: "1700000000.000001", UserID: "U1", Workspace: "T0FAKE"}
	_, err := env.a.Post(ctx, to, &bots.Message{Text: "an earlier reply", Key: "e0"})
	require.NoError(t, err)
	since := time.Now()
	st, err := env.a.StartStream(ctx, to, nil)
	require.NoError(t, err)
	require.NoError(t, st.Append(ctx, "half"))
	found, err := env.a.FindStream(ctx, to, since)
	require.NoError(t, err)
	require.Equal(t, st.Refs(), found)
}
