package core_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
)

// Conversation metadata is stored; rows written by earlier versions must
// read the same.
func TestConversationMetaReadsStoredRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		want    core.ConversationMeta
		wantErr bool
	}{
		{"platform conversation", `{"context":"slack","starter":"U1"}`, core.ConversationMeta{Context: tool.ContextSlack, Starter: "U1"}, false},
		{"scheduler post, empty starter", `{"context":"scheduler","starter":""}`, core.ConversationMeta{Context: tool.ContextScheduler}, false},
		{"no context reads as api", `{"starter":"alice"}`, core.ConversationMeta{Context: tool.ContextAPI, Starter: "alice"}, false},
		{"empty object", `{}`, core.ConversationMeta{Context: tool.ContextAPI}, false},
		{"no metadata", ``, core.ConversationMeta{Context: tool.ContextAPI}, false},
		{"not an object", `[1]`, core.ConversationMeta{Context: tool.ContextAPI}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := core.DecodeConversationMeta(json.RawMessage(tt.raw))
			require.Equal(t, tt.wantErr, err != nil, "error = %v", err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestConversationMetaEncodeKeepsKeys(t *testing.T) {
	t.Parallel()
	m := core.ConversationMeta{Context: tool.ContextDiscord, Starter: "U9"}
	require.JSONEq(t, `{"context":"discord","starter":"U9"}`, string(m.Encode()), "the stored keys must not change")
	back, err := core.DecodeConversationMeta(m.Encode())
	require.NoError(t, err)
	require.Equal(t, m, back)
}
