package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/bwmarrin/discordgo"
)

// MaxAppliedTags is how many tags a forum post may carry.
const MaxAppliedTags = 5

// modifyThread is Modify Channel for a thread, as far as its applied_tags
// go (https://discord.com/developers/docs/resources/channel#modify-channel-json-params-thread):
// the ids of tags of the parent forum or media channel's available_tags,
// at most 5. Other fields are not modelled and refused.
func (s *Server) modifyThread(_ http.ResponseWriter, r *http.Request, c *Call) (int, any) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(c.Body, &body); err != nil {
		return http.StatusBadRequest, errBody(50109, "The request body contains invalid JSON.")
	}
	raw, ok := body["applied_tags"]
	if !ok || len(body) != 1 {
		return http.StatusBadRequest, invalid("applied_tags", "BASE_TYPE_REQUIRED", "the fake models only applied_tags of a thread").body()
	}
	var tags []string
	if err := json.Unmarshal(raw, &tags); err != nil {
		return http.StatusBadRequest, invalid("applied_tags", "BASE_TYPE_BAD_TYPE", "Must be an array of snowflakes.").body()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.channels[r.PathValue("channel")]
	if !ok {
		return http.StatusNotFound, errBody(10003, "Unknown Channel")
	}
	parent := s.channels[th.ParentID]
	if !th.IsThread() || parent == nil || (parent.Type != discordgo.ChannelTypeGuildForum && parent.Type != discordgo.ChannelTypeGuildMedia) {
		return http.StatusBadRequest, invalid("applied_tags", "CHANNEL_TYPE_INVALID", "Tags apply to posts of forum and media channels only.").body()
	}
	if len(tags) > MaxAppliedTags {
		return http.StatusBadRequest, invalid("applied_tags", "BASE_TYPE_MAX_LENGTH", "Must be %d or fewer in length.", MaxAppliedTags).body()
	}
	for _, id := range tags {
		if !slices.ContainsFunc(parent.AvailableTags, func(t discordgo.ForumTag) bool { return t.ID == id }) {
			return http.StatusBadRequest, invalid("applied_tags", "TAG_INVALID", "Unknown tag %s.", id).body()
		}
	}
	th.AppliedTags = tags
	return http.StatusOK, th
}
